package gordon

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/quintet-operators/quintet/operators/gordon/api/v1"
	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/pods"
)

// patchSpec changes gordon's spec with a merge patch, which the controller's status writes
// cannot make conflict.
func patchSpec(g Gomega, gordon *v1.Gordon, change func(*v1.GordonPods)) {
	ctx := context.Background()
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(gordon), gordon)).To(Succeed())
	before := gordon.DeepCopy()
	change(&gordon.Spec.Gordon)
	g.Expect(env.Client.Patch(ctx, gordon, client.MergeFrom(before))).To(Succeed())
}

func TestGordonRollsAChangedTemplateWithinMaxSurgeAndMaxUnavailable(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	const replicas = 4
	gordon := newGordon(t, ns, replicas)
	runPods(g, waitForPods(t, gordon, replicas))
	waitReady(t, gordon, replicas)

	patchSpec(g, gordon, func(s *v1.GordonPods) {
		s.Env = []corev1.EnvVar{{Name: "GREETING", Value: "hello"}}
		s.RollingUpdate = &v1.RollingUpdate{MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0))}
	})

	// Play the kubelet: pods become Ready one step after they appear. At every step at most
	// replicas+1 pods exist and at least replicas are Ready.
	rolled := func(live []corev1.Pod) bool {
		for _, p := range live {
			if len(p.Spec.Containers[0].Env) != 1 || !pods.Ready(&p) {
				return false
			}
		}
		return len(live) == replicas
	}
	deadline := time.Now().Add(timeout)
	for {
		live := livePods(g, gordon)
		g.Expect(len(live)).To(BeNumerically("<=", replicas+1), "more pods than replicas + maxSurge")
		g.Expect(countReady(live)).To(BeNumerically(">=", replicas), "fewer Ready pods than replicas - maxUnavailable")
		if rolled(live) {
			break
		}
		g.Expect(time.Now().Before(deadline)).To(BeTrue(), "the rollout did not finish: %d pods", len(live))
		var fresh []corev1.Pod
		for _, p := range live {
			if !pods.Ready(&p) {
				fresh = append(fresh, p)
			}
		}
		runPods(g, fresh)
		time.Sleep(tick)
	}
	waitReady(t, gordon, replicas)
	g.Expect(gordon.Status.UpdatedReplicas).To(BeEquivalentTo(replicas))
	g.Expect(writes.Creates(ns)).To(Equal(2*replicas), "each pod replaced once")
	g.Eventually(replaced(gordon, replacedOutdated), timeout, tick).Should(BeEquivalentTo(replicas))
	g.Expect(replaced(gordon, replacedExcess)(g)).To(BeZero())
	g.Expect(events.Emitted(gordon, v1.EventScaled)).To(BeNumerically(">", 1))
}

func TestGordonReportsARolloutHeldByCrashLoopingPods(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	gordon := newGordon(t, newNamespace(t), 2)
	old := waitForPods(t, gordon, 2)
	runPods(g, old)
	waitReady(t, gordon, 2)

	patchSpec(g, gordon, func(s *v1.GordonPods) { s.Image = "example.com/gordon:broken" })
	// The default 25% rounds to one surge pod and none unavailable: one new pod, which
	// crash-loops.
	var broken corev1.Pod
	g.Eventually(func(g Gomega) {
		pods := livePods(g, gordon)
		g.Expect(pods).To(HaveLen(3))
		for _, p := range pods {
			if p.Spec.Containers[0].Image == gordon.Spec.Gordon.Image {
				broken = p
			}
		}
		g.Expect(broken.Name).NotTo(BeEmpty())
	}, timeout, tick).Should(Succeed())
	broken.Status.Phase = corev1.PodRunning
	broken.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: appName, Image: gordon.Spec.Gordon.Image,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}}
	g.Expect(env.Client.Status().Update(ctx, &broken)).To(Succeed())

	g.Eventually(func(g Gomega) {
		degraded := degradedCondition(g, gordon)
		g.Expect(degraded.Reason).To(Equal(conditions.ReasonPodsFailing))
		g.Expect(degraded.Message).To(Equal("pod " + broken.Name + ": CrashLoopBackOff (last exit code 1 after 0 restarts)"))
		g.Expect(conditions.Get(gordon, conditions.ProgressingCondition).Reason).To(Equal(v1.ReasonRollingUpdate))
		g.Expect(gordon.Status.UpdatedReplicas).To(BeEquivalentTo(1))
	}, timeout, tick).Should(Succeed())
	// Held: the old pods keep serving, the crash-looping pod is neither replaced nor joined.
	g.Consistently(func(g Gomega) {
		g.Expect(names(livePods(g, gordon))).To(ConsistOf(old[0].Name, old[1].Name, broken.Name))
	}, 2*time.Second, tick).Should(Succeed())

	// Reverting the image rolls back: the broken pod goes, the old ones stay.
	patchSpec(g, gordon, func(s *v1.GordonPods) { s.Image = v1.DefaultImage })
	g.Eventually(func(g Gomega) {
		g.Expect(names(livePods(g, gordon))).To(ConsistOf(old[0].Name, old[1].Name))
	}, timeout, tick).Should(Succeed())
	waitReady(t, gordon, 2)
	g.Expect(conditions.Get(gordon, conditions.DegradedCondition).Reason).To(Equal(conditions.ReasonAsExpected))
	// The broken pod went as outdated: its template is no longer the current one.
	g.Eventually(replaced(gordon, replacedOutdated), timeout, tick).Should(BeEquivalentTo(1))
}

func TestGordonBacksOffReplacingPodsThatKeepFailing(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	gordon := newGordon(t, ns, 1)
	fail := func() corev1.Pod {
		p := waitForPods(t, gordon, 1)[0]
		p.Status.Phase = corev1.PodFailed
		p.Status.Reason = "OutOfcpu" // what the kubelet says of a pod it cannot admit
		g.Expect(env.Client.Status().Update(ctx, &p)).To(Succeed())
		return p
	}
	gone := func(p corev1.Pod) func() error {
		return func() error { return env.Client.Get(ctx, client.ObjectKeyFromObject(&p), &corev1.Pod{}) }
	}
	// The first failure is replaced at once.
	first := fail()
	g.Eventually(gone(first), timeout, tick).ShouldNot(Succeed())
	// The second, right after, waits for the back-off: the failed pod stays for `kubectl
	// describe`, no pod is created, and status says why.
	second := fail()
	g.Eventually(func(g Gomega) {
		degraded := degradedCondition(g, gordon)
		g.Expect(degraded.Reason).To(Equal(conditions.ReasonPodsFailing))
		g.Expect(degraded.Message).To(HavePrefix("pod " + second.Name + " Failed (OutOfcpu); terminated pods are replaced after a back-off"))
	}, timeout, tick).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(writes.Creates(ns)).To(Equal(2))
		g.Expect(gone(second)()).To(Succeed())
	}, 3*time.Second, tick).Should(Succeed())
	// After the back-off (10s from the first replacement) it is replaced.
	g.Eventually(gone(second), replacementBackoffInitial+timeout, tick).ShouldNot(Succeed())
	g.Expect(waitForPods(t, gordon, 1)).To(HaveLen(1))
	g.Expect(writes.Creates(ns)).To(Equal(3))
	g.Eventually(replaced(gordon, replacedFailed), timeout, tick).Should(BeEquivalentTo(2))
}
