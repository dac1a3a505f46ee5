//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// evictAfter is how long the pods of the node-loss spec tolerate their node being unreachable
// or not ready, instead of Kubernetes' default 300 s: each workload's spec gives its pods the
// same tolerations, the ReplicaSet controller's as the operators'.
const evictAfter = 30

// evictionTolerations tolerate a node unreachable or not ready for evictAfter: the
// DefaultTolerationSeconds admission plugin adds its own only to a pod without them.
func evictionTolerations() []corev1.Toleration {
	tolerate := func(key string) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](evictAfter)}
	}
	return []corev1.Toleration{tolerate(corev1.TaintNodeUnreachable), tolerate(corev1.TaintNodeNotReady)}
}

// asFields turns v into unstructured fields.
func asFields(v any) any {
	var fields any
	Expect(json.Unmarshal([]byte(mustJSON(v)), &fields)).To(Succeed())
	return fields
}

// lostReplicas is one workload whose pods a node stop takes: its pods, how many it wants,
// and whether its owner's status says some are unavailable (nil for none to ask).
type lostReplicas struct {
	name     string
	selector client.MatchingLabels
	want     int
	unready  func(ctx context.Context, g Gomega) bool
	replaced time.Duration // how long after the stop every replica was Ready on another node
	said     bool          // the owner's status said some were unavailable, while they were
}

// readyByNode counts the workload's live Ready pods on each node.
func (w *lostReplicas) readyByNode(ctx context.Context, g Gomega, namespace string) map[string]int {
	count := map[string]int{}
	for _, p := range livePods(ctx, g, namespace, w.selector) {
		if podReady(&p) {
			count[p.Spec.NodeName]++
		}
	}
	return count
}

// readyOff counts the workload's live Ready pods on other nodes than node.
func (w *lostReplicas) readyOff(ctx context.Context, g Gomega, namespace, node string) int {
	n := 0
	for on, ready := range w.readyByNode(ctx, g, namespace) {
		if on != node {
			n += ready
		}
	}
	return n
}

// cordon marks a node unschedulable, or schedulable again, as kubectl cordon and uncordon do.
func cordon(ctx context.Context, node string, unschedulable bool) {
	patch := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, unschedulable)
	Expect(k8sClient.Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

// notReadyCondition reports whether o's Ready condition is anything but True.
func notReadyCondition(o *unstructured.Unstructured) func(ctx context.Context, g Gomega) bool {
	return func(ctx context.Context, g Gomega) bool {
		got := o.DeepCopy()
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(o), got)).To(Succeed())
		return conditionStatus(ctx, got, "Ready") != "True"
	}
}

// replicaSetBaseline is a Deployment of the agent: the ReplicaSet controller's pods, to time
// the operators' replacements against on the same node stop.
func replicaSetBaseline(namespace string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": "replicaset-baseline"}
	spec := agentPodSpec()
	spec.Tolerations = evictionTolerations()
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "replicaset-baseline", Namespace: namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}

// advertiseDevices plays ptemplate's device plugin on every real node: it advertises n devices
// of the sample's resource in the node's capacity (0 takes them away), as a plugin registering
// with the kubelet would.
func advertiseDevices(ctx context.Context, nodes []string, n int) {
	value := fmt.Sprintf("%q", strconv.Itoa(n))
	if n == 0 {
		value = "null"
	}
	for _, node := range nodes {
		patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"status":{"capacity":{%q:%s}}}`, ptemplateResource, value))
		Expect(k8sClient.Status().Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, patch)).To(Succeed())
	}
}

// readyConsumers is what a Ptemplate's status counts of its consumers, and whether its
// consumer on node is Ready.
func readyConsumers(ctx context.Context, g Gomega, pt *unstructured.Unstructured, node string) (int64, bool) {
	n, _, _ := unstructured.NestedInt64(ptemplateStatus(ctx, g, pt), "readyConsumers")
	for _, p := range livePods(ctx, g, pt.GetNamespace(), client.MatchingLabels{ptemplateLabel: pt.GetName()}) {
		if p.Spec.NodeName == node && podReady(&p) {
			return n, true
		}
	}
	return n, false
}

// Serial: the spec stops a real node, and cordons the others for a while.
var _ = Describe("The operators' pods on a stopped node", Ordered, Serial, Label("node-faults"), func() {
	It("are replaced on the other nodes once the node lifecycle controller evicts them, as the ReplicaSet controller's are, a Ptemplate's DaemonSet covers the node when it is back, and each status says what is unavailable meanwhile", func(ctx SpecContext) {
		nodes := byLocalVolumes(ctx, requireRealNodes(ctx, 3))
		victim, others := nodes[len(nodes)-1], nodes[:len(nodes)-1]
		ns := realNodeNamespace(ctx, "e2e-node-loss")
		for _, operator := range []string{"gordon", "minimart", "kre-runtime", "ptemplate-device"} {
			startOperator(operator, []string{"WATCH_NAMESPACE=" + ns})
		}
		if meta.IsNoMatchError(k8sClient.List(ctx, kmmModules())) {
			_, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{kmmModuleCRD}, ErrorIfPathMissing: true})
			Expect(err).NotTo(HaveOccurred())
		}
		DeferCleanup(func(ctx SpecContext) {
			_, _ = nodeFaultCommand(ctx, "node-start", victim).CombinedOutput()
			for _, node := range nodes {
				cordon(ctx, node, false)
				setModuleLoaded(ctx, node, ns, false)
			}
			advertiseDevices(ctx, nodes, 0)
		})

		By("a Ptemplate's consumers on every real node: KMM's label and the device plugin's devices are played by the spec")
		advertiseDevices(ctx, nodes, 5)
		for _, node := range nodes {
			setModuleLoaded(ctx, node, ns, true)
		}
		ptemplate := readSample("ptemplate-device", "ptemplates_v1alpha_ptemplate.yaml")
		ptemplate.SetNamespace(ns)
		unstructured.RemoveNestedField(ptemplate.Object, "spec", "imageRepoSecret")
		Expect(unstructured.SetNestedField(ptemplate.Object, requiredEnv("E2E_AGENT_IMAGE"), "spec", "consumerimage")).To(Succeed())
		Expect(unstructured.SetNestedStringMap(ptemplate.Object, map[string]string{realNodeLabel: "true"}, "spec", "selector")).To(Succeed())
		Expect(unstructured.SetNestedField(ptemplate.Object, realNodePlacement()["tolerations"], "spec", "tolerations")).To(Succeed())
		Expect(k8sClient.Create(ctx, ptemplate)).To(Succeed())
		Eventually(func(g Gomega) {
			n, _ := readyConsumers(ctx, g, ptemplate, victim)
			g.Expect(n).To(BeEquivalentTo(len(nodes)))
			g.Expect(conditionStatus(ctx, ptemplate, "Ready")).To(Equal("True"))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())

		By("the Runtime's servers, on local volumes, go to the other nodes: they could not move")
		cordon(ctx, victim, true)
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: kreMinIOSecret, Namespace: ns},
			StringData: map[string]string{"accessKey": "loss-root", "secretKey": "loss-minio-secret"},
		})).To(Succeed())
		Expect(k8sClient.Create(ctx, kreFlowRuntime(ns))).To(Succeed())
		Eventually(func(g Gomega) {
			for _, name := range []string{"kre-nats-0", "kre-mongo-0", "kre-minio-0"} {
				pod := &corev1.Pod{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod)).To(Succeed())
				g.Expect(pod.Spec.NodeName).To(BeElementOf(others), name)
			}
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		cordon(ctx, victim, false)

		By("every replica of the others starts on " + victim + ": the other nodes are cordoned meanwhile")
		for _, node := range others {
			cordon(ctx, node, true)
		}
		gordon := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": gordonGVK.GroupVersion().String(), "kind": gordonGVK.Kind,
			"metadata": map[string]any{"name": "lost", "namespace": ns},
			"spec": map[string]any{"gordon": map[string]any{
				"replicas": int64(2), "image": requiredEnv("E2E_AGENT_IMAGE"), "imagePullPolicy": "Never",
				"readinessProbe": map[string]any{"httpGet": map[string]any{"path": "/healthz", "port": int64(agentPort)}, "periodSeconds": int64(1)},
				"tolerations":    asFields(evictionTolerations()),
			}},
		}}
		Expect(k8sClient.Create(ctx, gordon)).To(Succeed())
		Expect(k8sClient.Create(ctx, replicaSetBaseline(ns, 2))).To(Succeed())
		minimart := readSample("minimart", "charts_v1alpha1_minimart.yaml")
		minimart.SetNamespace(ns)
		Expect(unstructured.SetNestedField(minimart.Object, int64(2), "spec", "replicaCount")).To(Succeed())
		Expect(unstructured.SetNestedField(minimart.Object, asFields(evictionTolerations()), "spec", "tolerations")).To(Succeed())
		Expect(k8sClient.Create(ctx, minimart)).To(Succeed())
		version := readSample("kre-runtime", "kre_v1alpha1_runtimeversion.yaml")
		version.SetNamespace(ns)
		Expect(unstructured.SetNestedField(version.Object, asFields(evictionTolerations()), "spec", "placement", "tolerations")).To(Succeed())
		Expect(k8sClient.Create(ctx, version)).To(Succeed())
		workloads := []*lostReplicas{
			{name: "ReplicaSet controller (Deployment)", selector: client.MatchingLabels{"app": "replicaset-baseline"}, want: 2},
			{name: "gordon (Gordon)", selector: client.MatchingLabels{gordonLabel: "lost"}, want: 2, unready: func(ctx context.Context, g Gomega) bool {
				ready, _, _ := unstructured.NestedInt64(gordonStatus(ctx, g, gordon), "readyReplicas")
				return ready < 2 && notReadyCondition(gordon)(ctx, g)
			}},
			{name: "minimart (Minimart)", selector: client.MatchingLabels{"app.kubernetes.io/instance": minimart.GetName()}, want: 2, unready: notReadyCondition(minimart)},
			{name: "kre-runtime (RuntimeVersion)", selector: client.MatchingLabels{"kre.konstellation.io/version": version.GetName()}, want: 4, unready: notReadyCondition(version)},
		}
		Eventually(func(g Gomega) {
			for _, w := range workloads {
				g.Expect(w.readyByNode(ctx, g, ns)[victim]).To(Equal(w.want), w.name)
				if w.unready != nil {
					g.Expect(w.unready(ctx, g)).To(BeFalse(), "%s's status says Ready", w.name)
				}
			}
		}).WithContext(ctx).WithTimeout(4 * time.Minute).Should(Succeed())
		for _, node := range others {
			cordon(ctx, node, false)
		}

		stopped := time.Now()
		runNodeFault(ctx, "node-stop", victim)
		By("each workload's replicas are Ready on the other nodes; until then its status says some are not")
		var marked time.Duration
		consumersSaid := false // the Ptemplate's status counted the stopped node's consumer out
		Eventually(func(g Gomega) {
			if marked == 0 && nodeReadyStatus(ctx, g, victim) == corev1.ConditionUnknown {
				marked = time.Since(stopped)
			}
			if n, _ := readyConsumers(ctx, g, ptemplate, victim); n < int64(len(nodes)) {
				consumersSaid = true
			}
			var waiting []string // every workload is looked at on every poll, so each gets its own time
			for _, w := range workloads {
				switch {
				case w.replaced != 0:
				case w.readyOff(ctx, g, ns, victim) >= w.want:
					w.replaced = time.Since(stopped)
				default:
					waiting = append(waiting, w.name)
					w.said = w.said || (w.unready != nil && w.unready(ctx, g))
				}
			}
			g.Expect(waiting).To(BeEmpty(), "not every replica is Ready on another node yet")
		}).WithContext(ctx).WithTimeout(6 * time.Minute).WithPolling(time.Second).Should(Succeed())
		AddReportEntry("node-loss", fmt.Sprintf("%s was marked Unknown %s after it stopped; its pods tolerate that for %d s", victim, marked.Round(time.Second), evictAfter))
		for _, w := range workloads {
			AddReportEntry("node-loss", fmt.Sprintf("%s: every replica Ready on another node %s after the node stopped", w.name, w.replaced.Round(time.Second)))
			if w.unready != nil {
				Expect(w.said).To(BeTrue(), "%s's status must say that replicas are unavailable while they are", w.name)
			}
		}
		By("and each status is Ready again")
		Eventually(func(g Gomega) {
			for _, w := range workloads {
				if w.unready != nil {
					g.Expect(w.unready(ctx, g)).To(BeFalse(), "%s's status says Ready", w.name)
				}
			}
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		Eventually(func(g Gomega) {
			n, _ := readyConsumers(ctx, g, ptemplate, victim)
			g.Expect(n).To(BeEquivalentTo(len(nodes) - 1))
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed(), "the Ptemplate's status counts the stopped node's consumer out")
		Expect(consumersSaid).To(BeTrue())

		runNodeFault(ctx, "node-start", victim)
		started := time.Now()
		advertiseDevices(ctx, []string{victim}, 5) // the device plugin registers again with the kubelet
		By("the Ptemplate's DaemonSet covers the node that came back")
		Eventually(func(g Gomega) {
			n, ready := readyConsumers(ctx, g, ptemplate, victim)
			g.Expect(ready).To(BeTrue(), "a consumer Ready on %s", victim)
			g.Expect(n).To(BeEquivalentTo(len(nodes)))
			g.Expect(conditionStatus(ctx, ptemplate, "Ready")).To(Equal("True"))
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		AddReportEntry("node-loss", fmt.Sprintf("ptemplate-device (Ptemplate): its consumer on %s Ready again and counted %s after the node started",
			victim, time.Since(started).Round(time.Second)))
	}, SpecTimeout(15*time.Minute))
})
