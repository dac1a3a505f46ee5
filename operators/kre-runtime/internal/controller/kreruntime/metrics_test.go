package kreruntime

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
	"github.com/quintet-operators/quintet/shared/status"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// sampleText writes samples as `metric[labels after namespace and name] value`, in order.
func sampleText(samples []status.Sample) []string {
	names := map[any]string{dependencyReady: "dependency", versionInfo: "version", runtimeNodes: "nodes"}
	out := make([]string, 0, len(samples))
	for _, s := range samples {
		out = append(out, fmt.Sprintf("%s%v %g", names[s.Gauge], s.Labels[2:], s.Value))
	}
	return out
}

// metricsVersion is a RuntimeVersion of runtime in state, with a node per entry of nodes: its
// name and replicas in the spec, and the entry itself in the status.
func metricsVersion(name, runtime string, state v1alpha1.VersionState, nodes ...v1alpha1.NodeStatus) v1alpha1.RuntimeVersion {
	v := v1alpha1.RuntimeVersion{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
		CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}}
	v.Spec.RuntimeRef.Name, v.Spec.State = runtime, state
	for _, n := range nodes {
		v.Spec.Nodes = append(v.Spec.Nodes, v1alpha1.Node{Name: n.Name, Replicas: ptr.To(n.Replicas)})
		v.Status.Nodes = append(v.Status.Nodes, n)
	}
	return v
}

func TestRuntimeSamplesSayItsServersAndTheVersionsThatRunOnIt(t *testing.T) {
	rt := &v1alpha1.Runtime{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rt"}}
	rt.Status.Mongo.Ready, rt.Status.NATSStreaming.Ready = true, true
	node := func(name string, replicas, ready int32) v1alpha1.NodeStatus {
		return v1alpha1.NodeStatus{Name: name, Replicas: replicas, ReadyReplicas: ready}
	}
	going := metricsVersion("going", "rt", v1alpha1.StateStarted, node("a", 1, 1))
	going.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	held := metricsVersion("held", "rt", v1alpha1.StateStarted, node("a", 2, 0), node("b", 1, 0))
	held.Status.Nodes[0].Replicas = 0 // waiting for the Runtime's servers: held at zero

	servers := []string{"dependency[mongodb] 1", "dependency[nats] 1", "dependency[objectstore] 0"}
	for _, tt := range []struct {
		name     string
		versions []v1alpha1.RuntimeVersion
		want     []string
	}{
		{"no version", nil, append(slices.Clone(servers), "nodes[desired] 0", "nodes[ready] 0")},
		{"two started, one of them rolling; one stopped; one of another Runtime; one going", []v1alpha1.RuntimeVersion{
			metricsVersion("v1", "rt", v1alpha1.StateStarted, node("a", 2, 2), node("b", 1, 1), node("off", 0, 0)),
			metricsVersion("v2", "rt", v1alpha1.StateStarted, node("a", 3, 2)),
			metricsVersion("v0", "rt", v1alpha1.StateStopped, node("a", 1, 1)),
			metricsVersion("theirs", "other", v1alpha1.StateStarted, node("a", 1, 1)),
			going,
		}, append(slices.Clone(servers), "version[v1] 1", "version[v2] 1", "nodes[desired] 3", "nodes[ready] 2")},
		{"started, held until the servers answer", []v1alpha1.RuntimeVersion{held},
			append(slices.Clone(servers), "version[held] 1", "nodes[desired] 2", "nodes[ready] 0")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := sampleText(runtimeSamples(rt, tt.versions)); !slices.Equal(got, tt.want) {
				t.Errorf("samples\n%v\nwant\n%v", got, tt.want)
			}
		})
	}
}

var runtimeMetrics = []string{"quintet_kre_runtime_dependency_ready", "quintet_kre_runtime_version_info", "quintet_kre_runtime_nodes"}

func TestRuntimeMetricsFollowItsServersAndVersionsAndGoWithIt(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	applySample(t, ns, "kre_v1alpha1_runtime.yaml")
	statefulSetsOf(t, ns)
	rt := types.NamespacedName{Namespace: ns, Name: "example4"}
	g.Eventually(func(g Gomega) {
		g.Expect(metric(g, "quintet_kre_runtime_dependency_ready", rt, "dependency")).To(Equal(map[string]float64{
			"mongodb": 0, "nats": 0, "objectstore": 0}))
		g.Expect(metric(g, "quintet_kre_runtime_nodes", rt, "state")).To(Equal(map[string]float64{"desired": 0, "ready": 0}))
		g.Expect(metric(g, "quintet_kre_runtime_version_info", rt, "version")).To(BeEmpty())
	}, timeout, tick).Should(Succeed())

	markReady(g, ns)
	version := applySample(t, ns, "kre_v1alpha1_runtimeversion.yaml")
	g.Eventually(func(g Gomega) {
		g.Expect(metric(g, "quintet_kre_runtime_dependency_ready", rt, "dependency")).To(Equal(map[string]float64{
			"mongodb": 1, "nats": 1, "objectstore": 1}))
		g.Expect(metric(g, "quintet_kre_runtime_version_info", rt, "version")).To(Equal(map[string]float64{"greeter-v1": 1}))
		g.Expect(metric(g, "quintet_kre_runtime_nodes", rt, "state")).To(Equal(map[string]float64{"desired": 3, "ready": 0}))
	}, timeout, tick).Should(Succeed())

	// What the RuntimeVersion controller (not run here) reports once its nodes are ready.
	rv := &v1alpha1.RuntimeVersion{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(version), rv)).To(Succeed())
	for _, name := range []string{"prepare", "greet", "stamp"} {
		rv.Status.Nodes = append(rv.Status.Nodes, v1alpha1.NodeStatus{Name: name, Replicas: 1, ReadyReplicas: 1})
	}
	g.Expect(env.Client.Status().Update(ctx, rv)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(metric(g, "quintet_kre_runtime_nodes", rt, "state")).To(Equal(map[string]float64{"desired": 3, "ready": 3}))
	}, timeout, tick).Should(Succeed())

	// Stopped, the version runs no more.
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"state":"Stopped"}}`))
	g.Expect(env.Client.Patch(ctx, version, patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(metric(g, "quintet_kre_runtime_version_info", rt, "version")).To(BeEmpty())
		g.Expect(metric(g, "quintet_kre_runtime_nodes", rt, "state")).To(Equal(map[string]float64{"desired": 0, "ready": 0}))
	}, timeout, tick).Should(Succeed())

	g.Expect(env.Client.Delete(ctx, &v1alpha1.Runtime{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "example4"}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		for _, name := range runtimeMetrics {
			g.Expect(metric(g, name, rt, "")).To(BeEmpty(), name)
		}
	}, timeout, tick).Should(Succeed())
}

// metric is the value of each series of the metric name of the Runtime rt, by its label by.
func metric(g Gomega, name string, rt types.NamespacedName, by string) map[string]float64 {
	series, err := testenv.Series(name, map[string]string{"namespace": rt.Namespace, "name": rt.Name})
	g.Expect(err).NotTo(HaveOccurred())
	out := map[string]float64{}
	for _, s := range series {
		out[s.Labels[by]] = s.Value
	}
	return out
}
