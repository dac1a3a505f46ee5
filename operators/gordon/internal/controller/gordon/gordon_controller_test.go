package gordon

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/quintet-operators/quintet/operators/gordon/api/v1"
	"github.com/quintet-operators/quintet/shared/conditions"
)

const (
	timeout = 20 * time.Second
	tick    = 100 * time.Millisecond
)

func newNamespace(t *testing.T) string { return env.NewNamespace(t, "gordon-test") }

func newGordon(t *testing.T, ns string, replicas int32) *v1.Gordon {
	t.Helper()
	g := &v1.Gordon{ObjectMeta: metav1.ObjectMeta{Name: "gordoncluster", Namespace: ns}}
	g.Spec.Gordon.Replicas = ptr.To(replicas)
	if err := env.Client.Create(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	return g
}

// livePods lists g's pods that are not terminating, straight from the API server.
func livePods(g Gomega, gordon *v1.Gordon) []corev1.Pod {
	list := &corev1.PodList{}
	g.Expect(env.Client.List(context.Background(), list, client.InNamespace(gordon.Namespace),
		client.MatchingLabels{v1.GordonLabel: gordon.Name})).To(Succeed())
	var live []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			live = append(live, p)
		}
	}
	return live
}

// runPods does what kube-scheduler and the kubelet would: bind each pod to a node and report
// it Running and Ready. envtest runs neither.
func runPods(g Gomega, pods []corev1.Pod) {
	ctx := context.Background()
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName == "" {
			binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
				Target: corev1.ObjectReference{Kind: "Node", Name: "envtest-node"}}
			g.Expect(env.Client.SubResource("binding").Create(ctx, p, binding)).To(Succeed())
		}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		g.Expect(env.Client.Status().Update(ctx, p)).To(Succeed())
	}
}

// waitForPods waits until gordon has n live pods, and returns them.
func waitForPods(t *testing.T, gordon *v1.Gordon, n int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	NewWithT(t).Eventually(func(g Gomega) {
		pods = livePods(g, gordon)
		g.Expect(pods).To(HaveLen(n))
	}, timeout, tick).Should(Succeed())
	return pods
}

// waitReady waits until gordon reports Ready with n ready pods at its current generation.
func waitReady(t *testing.T, gordon *v1.Gordon, n int32) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(gordon), gordon)).To(Succeed())
		g.Expect(gordon.Status.ObservedGeneration).To(Equal(gordon.Generation))
		g.Expect(gordon.Status.ReadyReplicas).To(Equal(n))
		g.Expect(conditions.IsTrue(gordon, conditions.ReadyCondition)).To(BeTrue())
	}, timeout, tick).Should(Succeed())
}

// degradedCondition reads gordon from the API server and returns its Degraded condition.
func degradedCondition(g Gomega, gordon *v1.Gordon) metav1.Condition {
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(gordon), gordon)).To(Succeed())
	c := conditions.Get(gordon, conditions.DegradedCondition)
	g.Expect(c).NotTo(BeNil())
	return *c
}

func TestGordonCreatesOwnedRestrictedPodsAndReportsThem(t *testing.T) {
	g := NewWithT(t)
	gordon := newGordon(t, newNamespace(t), 3)
	pods := waitForPods(t, gordon, 3)
	for _, p := range pods {
		g.Expect(metav1.IsControlledBy(&p, gordon)).To(BeTrue(), "pod %s is not controlled by the Gordon", p.Name)
		g.Expect(p.GenerateName).To(Equal("gordoncluster-"))
		g.Expect(p.Spec.Containers[0].Image).To(Equal(v1.DefaultImage))
		g.Expect(*p.Spec.SecurityContext.RunAsNonRoot).To(BeTrue())
	}
	// Not Ready until the pods are.
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(gordon), gordon)).To(Succeed())
		g.Expect(gordon.Status.Replicas).To(BeEquivalentTo(3))
		g.Expect(conditions.Get(gordon, conditions.ReadyCondition)).NotTo(BeNil())
		g.Expect(conditions.Get(gordon, conditions.ReadyCondition).Reason).To(Equal(v1.ReasonPodsNotReady))
		g.Expect(conditions.IsTrue(gordon, conditions.ProgressingCondition)).To(BeTrue())
	}, timeout, tick).Should(Succeed())

	runPods(g, pods)
	waitReady(t, gordon, 3)
	g.Expect(gordon.Status.Pods).To(ConsistOf(names(pods)))
	g.Expect(gordon.Status.Selector).To(Equal(v1.GordonLabel + "=gordoncluster"))
	g.Expect(conditions.Get(gordon, conditions.ProgressingCondition).Reason).To(Equal(conditions.ReasonStable))
	g.Expect(conditions.Get(gordon, conditions.DegradedCondition).Status).To(Equal(metav1.ConditionFalse))
}

// The manager's cache holds of each pod what the operator reads, its metadata, node and
// status, not the rest of its spec: at a thousand Gordons the manager caches 3000 pods.
func TestGordonCachesOfEachPodItsMetadataNodeAndStatusOnly(t *testing.T) {
	g := NewWithT(t)
	gordon := newGordon(t, newNamespace(t), 1)
	pods := waitForPods(t, gordon, 1)
	runPods(g, pods)
	waitReady(t, gordon, 1)
	cached := &corev1.Pod{}
	g.Expect(reconciler.Get(context.Background(), client.ObjectKeyFromObject(&pods[0]), cached)).To(Succeed())
	g.Expect(cached.Spec).To(Equal(corev1.PodSpec{NodeName: "envtest-node"}))
	g.Expect(cached.Status.Phase).To(Equal(corev1.PodRunning))
	g.Expect(metav1.IsControlledBy(cached, gordon)).To(BeTrue())
	g.Expect(cached.Labels).To(HaveKeyWithValue(v1.GordonLabel, gordon.Name))
	g.Expect(pods[0].Spec.Containers).NotTo(BeEmpty(), "the API server holds the whole pod")
}

func TestGordonScalesUpAndDownThroughTheScaleSubresource(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	gordon := newGordon(t, newNamespace(t), 3)
	runPods(g, waitForPods(t, gordon, 3))

	scale := func(n int32) {
		s := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: n}}
		g.Expect(env.Client.SubResource("scale").Update(ctx, gordon, client.WithSubResourceBody(s))).To(Succeed())
	}
	scale(5)
	pods := waitForPods(t, gordon, 5)
	var fresh []corev1.Pod
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			fresh = append(fresh, p)
		}
	}
	g.Expect(fresh).To(HaveLen(2))
	// Of the two new pods one becomes Ready; scaling to 1 must remove the not-ready one
	// first, then the newest of the Ready ones.
	runPods(g, fresh[:1])
	notReady := fresh[1].Name
	waitReadyCount := func(n int32) {
		g.Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(gordon), gordon)).To(Succeed())
			g.Expect(gordon.Status.ReadyReplicas).To(Equal(n))
		}, timeout, tick).Should(Succeed())
	}
	waitReadyCount(4)

	scale(1)
	remaining := waitForPods(t, gordon, 1)
	g.Expect(remaining[0].Name).NotTo(Equal(notReady))
	var oldest corev1.Pod
	for _, p := range pods {
		if p.Name != notReady && (oldest.Name == "" || p.CreationTimestamp.Before(&oldest.CreationTimestamp)) {
			oldest = p
		}
	}
	g.Expect(remaining[0].CreationTimestamp.Equal(&oldest.CreationTimestamp)).To(BeTrue(),
		"the pod kept (%s) must be among the oldest Ready ones", remaining[0].Name)
	waitReady(t, gordon, 1)
	g.Eventually(replaced(gordon, replacedExcess), timeout, tick).Should(BeEquivalentTo(4))

	s := &autoscalingv1.Scale{}
	g.Expect(env.Client.SubResource("scale").Get(ctx, gordon, s)).To(Succeed())
	g.Expect(s.Status.Replicas).To(BeEquivalentTo(1))
	g.Expect(s.Status.Selector).To(Equal(v1.GordonLabel + "=gordoncluster"))
}

func TestGordonReplacesDeletedAndFailedPods(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	gordon := newGordon(t, newNamespace(t), 2)
	pods := waitForPods(t, gordon, 2)
	runPods(g, pods)

	g.Expect(env.Client.Delete(ctx, &pods[0])).To(Succeed())
	failed := pods[1]
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&failed), &failed)).To(Succeed())
	failed.Status.Phase = corev1.PodFailed
	failed.Status.Reason = "Evicted"
	g.Expect(env.Client.Status().Update(ctx, &failed)).To(Succeed())

	g.Eventually(func(g Gomega) {
		live := livePods(g, gordon)
		g.Expect(live).To(HaveLen(2))
		g.Expect(names(live)).NotTo(ContainElements(pods[0].Name, pods[1].Name))
	}, timeout, tick).Should(Succeed())
	// The failed pod is removed, not left behind.
	g.Eventually(func() error {
		return env.Client.Get(ctx, client.ObjectKeyFromObject(&failed), &corev1.Pod{})
	}, timeout, tick).ShouldNot(Succeed())
	// The operator counts the failed pod it deleted, not the pod someone else did.
	g.Eventually(replaced(gordon, replacedFailed), timeout, tick).Should(BeEquivalentTo(1))
	for _, reason := range []string{replacedSucceeded, replacedOutdated, replacedExcess} {
		g.Expect(replaced(gordon, reason)(g)).To(BeZero(), reason)
	}
}

func TestGordonNeverRunsMorePodsThanDesiredUnderEventBursts(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	const replicas = 10
	gordon := newGordon(t, newNamespace(t), replicas)
	// A burst of events while the pods are being created and the cache lags (cacheLag):
	// every annotation change enqueues the Gordon again.
	for i := range 60 {
		patch := client.RawPatch("application/merge-patch+json",
			fmt.Appendf(nil, `{"metadata":{"annotations":{"burst":"%d"}}}`, i))
		g.Expect(env.Client.Patch(ctx, gordon, patch)).To(Succeed())
		time.Sleep(cacheLag / 20)
	}
	count := func() int {
		list := &corev1.PodList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(gordon.Namespace))).To(Succeed())
		return len(list.Items)
	}
	g.Eventually(count, timeout, tick).Should(Equal(replicas))
	g.Consistently(count, 3*time.Second, tick).Should(Equal(replicas))
	// Not only the end state: the controller never created a pod too many on the way.
	g.Expect(writes.Creates(gordon.Namespace)).To(Equal(replicas))
}

func TestGordonMakesNoWritesAndLogsNothingInSteadyState(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	before := writes.Writes()
	ns := newNamespace(t)
	gordon := newGordon(t, ns, 2)
	runPods(g, waitForPods(t, gordon, 2))
	waitReady(t, gordon, 2)
	g.Expect(writes.Writes()-before).To(BeNumerically(">=", 3), "creating two pods and the status must count as writes")
	g.Expect(logs.Since(0, ns, "Creating pods")).NotTo(BeEmpty(), "a change is logged")

	// Let in-flight reconciles of the pod updates finish, then measure.
	time.Sleep(time.Second)
	before, mark := writes.WritesIn(ns), logs.Len()
	for i := range 5 {
		patch := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"metadata":{"labels":{"poke":"%d"}}}`, i))
		g.Expect(env.Client.Patch(ctx, gordon, patch)).To(Succeed())
		_, err := reconciler.Reconcile(ctx, reconcileRequest(gordon))
		g.Expect(err).NotTo(HaveOccurred())
	}
	time.Sleep(time.Second)
	g.Expect(writes.WritesIn(ns) - before).To(BeZero())
	g.Expect(logs.Since(mark, ns)).To(BeEmpty(), "an idle pass logs nothing")
}

func TestGordonWhosePodsTheAPIRejectsIsDegradedOnceAndNotRetried(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	// Requests above limits: the CRD lets it through, the pod API refuses every such pod.
	gordon := &v1.Gordon{ObjectMeta: metav1.ObjectMeta{Name: "invalid", Namespace: ns}}
	gordon.Spec.Gordon.Replicas = ptr.To[int32](3)
	gordon.Spec.Gordon.Resources = &corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
	}
	g.Expect(env.Client.Create(ctx, gordon)).To(Succeed())
	g.Eventually(func(g Gomega) {
		degraded := degradedCondition(g, gordon)
		g.Expect(degraded.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(degraded.Reason).To(Equal(v1.ReasonPodCreateFailed))
		g.Expect(degraded.Message).To(ContainSubstring("must be less than or equal to cpu limit"))
	}, timeout, tick).Should(Succeed())

	// Terminal: no retry loop against the API server, one Warning Event for the failure.
	// One create per pass: the first, and the one its status write triggers (however late a
	// loaded machine runs it), where a retried error would try again and again.
	g.Consistently(func() int { return writes.Creates(ns) }, 4*time.Second, tick).Should(BeNumerically("<=", 2))
	g.Expect(events.Emitted(gordon, v1.ReasonPodCreateFailed)).To(Equal(1))

	// A fixed spec is retried at once and recovers.
	gordon.Spec.Gordon.Resources = nil
	g.Expect(env.Client.Update(ctx, gordon)).To(Succeed())
	runPods(g, waitForPods(t, gordon, 3))
	waitReady(t, gordon, 3)
	g.Expect(conditions.Get(gordon, conditions.DegradedCondition).Status).To(Equal(metav1.ConditionFalse))
	g.Expect(events.Emitted(gordon, conditions.ReasonAsExpected)).To(Equal(1), "the recovery is an Event too")
}

// A namespace being deleted refuses new pods until its deletion takes the Gordon too: a pod
// deleted there (the namespace's controller deletes them before the Gordon) starts a pass that
// tries once and does not retry, as the ReplicaSet controller does, nor says it is Degraded.
func TestGordonInANamespaceBeingDeletedDoesNotFightForItsPods(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	gordon := newGordon(t, ns, 2)
	pods := waitForPods(t, gordon, 2)
	// envtest runs no namespace controller: the namespace stays Terminating.
	g.Expect(env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	creates := writes.Creates(ns)
	g.Expect(env.Client.Delete(ctx, &pods[0])).To(Succeed())
	g.Eventually(func() int { return writes.Creates(ns) }, timeout, tick).Should(BeNumerically(">", creates))
	// Each event the deletion makes starts a pass and a try (the pod's deletion, the status
	// write it leads to, the passes this package's lagging cache adds); then the tries stop. A
	// retry with back-off from 5 ms tries again after 1.3 s, 2.6 s, 5.1 s, ... of failing.
	tried, err := writes.CreatesOnceStill(ns, timeout)
	g.Expect(err).NotTo(HaveOccurred())
	g.Consistently(func() int { return writes.Creates(ns) }, 4*time.Second, tick).Should(Equal(tried))
	g.Expect(degradedCondition(g, gordon).Status).To(Equal(metav1.ConditionFalse))
}

func TestGordonRejectsBadInputAtAdmission(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	tests := []struct {
		name string
		spec map[string]any
		want string
	}{
		{"negative replicas", map[string]any{"gordon": map[string]any{"replicas": -1}},
			"spec.gordon.replicas: Invalid value: -1: spec.gordon.replicas in body should be greater than or equal to 0"},
		{"replicas of the wrong type", map[string]any{"gordon": map[string]any{"replicas": "three"}},
			`spec.gordon.replicas: Invalid value: "string": spec.gordon.replicas in body must be of type integer`},
		{"too many replicas", map[string]any{"gordon": map[string]any{"replicas": 1001}},
			"should be less than or equal to 1000"},
		{"image with a space", map[string]any{"gordon": map[string]any{"image": "a b"}},
			"image must not contain spaces"},
		{"unknown pull policy", map[string]any{"gordon": map[string]any{"imagePullPolicy": "Sometimes"}},
			`Unsupported value: "Sometimes"`},
		{"no gordon section", map[string]any{}, `spec.gordon: Required value`},
		{"privileged container", map[string]any{"gordon": map[string]any{"securityContext": map[string]any{"privileged": true}}},
			"privileged containers break the restricted Pod Security level"},
		{"added capability", map[string]any{"gordon": map[string]any{"securityContext": map[string]any{"capabilities": map[string]any{"add": []any{"SYS_ADMIN"}}}}},
			"only NET_BIND_SERVICE may be added"},
		{"root user", map[string]any{"gordon": map[string]any{"securityContext": map[string]any{"runAsUser": 0}}},
			"runAsUser must not be 0"},
		{"AppArmor unconfined", map[string]any{"gordon": map[string]any{"securityContext": map[string]any{"appArmorProfile": map[string]any{"type": "Unconfined"}}}},
			"appArmorProfile Unconfined breaks the restricted Pod Security level"},
		{"an SELinux user", map[string]any{"gordon": map[string]any{"securityContext": map[string]any{"seLinuxOptions": map[string]any{"user": "system_u"}}}},
			"seLinuxOptions may set only level and a container type"},
		{"an SELinux type of the host", map[string]any{"gordon": map[string]any{"securityContext": map[string]any{"seLinuxOptions": map[string]any{"type": "spc_t"}}}},
			"seLinuxOptions may set only level and a container type"},
		{"an unmasked /proc", map[string]any{"gordon": map[string]any{"securityContext": map[string]any{"procMount": "Unmasked"}}},
			"procMount Unmasked breaks the restricted Pod Security level"},
		{"a Windows host process", map[string]any{"gordon": map[string]any{"securityContext": map[string]any{"windowsOptions": map[string]any{"hostProcess": true}}}},
			"windowsOptions.hostProcess breaks the restricted Pod Security level"},
		{"a probe of another host", map[string]any{"gordon": map[string]any{"livenessProbe": map[string]any{"httpGet": map[string]any{"host": "169.254.169.254", "port": 80}}}},
			"livenessProbe must not set a host: the kubelet would connect from the node to wherever it names"},
		{"a TCP probe of another host", map[string]any{"gordon": map[string]any{"readinessProbe": map[string]any{"tcpSocket": map[string]any{"host": "kubernetes.default", "port": 443}}}},
			"readinessProbe must not set a host"},
		{"rollout that cannot start", map[string]any{"gordon": map[string]any{"rollingUpdate": map[string]any{"maxSurge": 0, "maxUnavailable": "0%"}}},
			"maxSurge and maxUnavailable must not both be 0"},
		{"percentage above 100", map[string]any{"gordon": map[string]any{"rollingUpdate": map[string]any{"maxUnavailable": "150%"}}},
			"maxUnavailable must be a non-negative number or a percentage from 0% to 100%"},
		{"negative surge", map[string]any{"gordon": map[string]any{"rollingUpdate": map[string]any{"maxSurge": -1}}},
			"maxSurge must be a non-negative number or a percentage from 0% to 100%"},
		{"two env vars of one name", map[string]any{"gordon": map[string]any{"env": []any{
			map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "A", "value": "2"}}}},
			`spec.gordon.env[1]: Duplicate value: {"name":"A"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": v1.GroupVersion.String(), "kind": "Gordon",
				"metadata": map[string]any{"generateName": "bad-", "namespace": ns},
				"spec":     tt.spec,
			}}
			err := env.Client.Create(ctx, u)
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tt.want)))
		})
	}
}

func TestGordonDefaultsReplicasAndImage(t *testing.T) {
	g := NewWithT(t)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1.GroupVersion.String(), "kind": "Gordon",
		"metadata": map[string]any{"name": "defaults", "namespace": newNamespace(t)},
		"spec":     map[string]any{"gordon": map[string]any{}},
	}}
	g.Expect(env.Client.Create(context.Background(), u)).To(Succeed())
	gordon := &v1.Gordon{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(u), gordon)).To(Succeed())
	g.Expect(gordon.Spec.Gordon.Replicas).To(HaveValue(BeEquivalentTo(1)))
	g.Expect(gordon.Spec.Gordon.Image).To(Equal(v1.DefaultImage))
	g.Expect(gordon.Spec.Gordon.ImagePullPolicy).To(Equal(corev1.PullIfNotPresent))
	g.Expect(gordon.Spec.Gordon.RollingUpdate).To(Equal(&v1.RollingUpdate{
		MaxSurge: ptr.To(intstr.FromString("25%")), MaxUnavailable: ptr.To(intstr.FromString("25%"))}))
}
