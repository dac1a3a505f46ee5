package kreruntime

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
	"github.com/quintet-operators/quintet/shared/status"
)

// runtimeLabels are the names of the labels every series has (the Runtime's namespace and
// name), then extra.
func runtimeLabels(extra ...string) []string { return append([]string{"namespace", "name"}, extra...) }

// What the operator knows of each Runtime, as Prometheus metrics on the manager's /metrics:
// its servers, and the RuntimeVersions that run on it. Labels are bounded: the Runtime, its
// three servers, two node states, and the names of its Started RuntimeVersions (objects, not
// free text).
var (
	dependencyReady = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_kre_runtime_dependency_ready",
		Help: "1 when every replica of a Runtime's server is ready, else 0: mongodb (spec.mongo), nats (spec.nats_streaming), objectstore (spec.minio).",
	}, runtimeLabels("dependency"))
	versionInfo = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_kre_runtime_version_info",
		Help: "Always 1, for each RuntimeVersion (version: its name) that names the Runtime and is Started.",
	}, runtimeLabels("version"))
	runtimeNodes = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_kre_runtime_nodes",
		Help: "Nodes (workflow steps) of a Runtime's Started RuntimeVersions: desired (asking for replicas), ready (every replica ready).",
	}, runtimeLabels("state"))
)

// The dependency label's values: a Runtime's servers, as RuntimeVersions depend on them.
const (
	dependencyMongoDB     = "mongodb"
	dependencyNATS        = "nats"
	dependencyObjectStore = "objectstore"
)

func init() {
	status.MustRegister(exported)
}

// runtimeSamples are the series of rt's status and of the RuntimeVersions among versions
// that run on it. It is pure.
func runtimeSamples(rt *v1alpha1.Runtime, versions []v1alpha1.RuntimeVersion) []status.Sample {
	of := func(g *status.Gauge, value float64, labels ...string) status.Sample {
		return status.Sample{Gauge: g, Labels: append([]string{rt.Namespace, rt.Name}, labels...), Value: value}
	}
	out := []status.Sample{
		of(dependencyReady, bit(rt.Status.Mongo.Ready), dependencyMongoDB),
		of(dependencyReady, bit(rt.Status.NATSStreaming.Ready), dependencyNATS),
		of(dependencyReady, bit(rt.Status.MinIO.Ready), dependencyObjectStore),
	}
	var desired, ready int
	for _, v := range startedVersions(rt.Name, versions) {
		out = append(out, of(versionInfo, 1, v.Name))
		d, r := nodeCounts(&v)
		desired, ready = desired+d, ready+r
	}
	return append(out, of(runtimeNodes, float64(desired), "desired"), of(runtimeNodes, float64(ready), "ready"))
}

// nodeCounts are v's nodes that ask for replicas, and those of them whose status says every
// replica they ask for is ready (a node held at zero while the version waits for its
// Runtime's servers is not). The entrypoint is not a node.
func nodeCounts(v *v1alpha1.RuntimeVersion) (desired, ready int) {
	for _, n := range v.Spec.Nodes {
		want := ptr.Deref(n.Replicas, 1)
		if want == 0 {
			continue
		}
		desired++
		i := slices.IndexFunc(v.Status.Nodes, func(s v1alpha1.NodeStatus) bool { return s.Name == n.Name })
		if i >= 0 && v.Status.Nodes[i].Replicas == want && v.Status.Nodes[i].ReadyReplicas >= want {
			ready++
		}
	}
	return desired, ready
}

func bit(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// exported are each Runtime's series: a version stopped or deleted loses its series, and a
// Runtime deleted loses all of them.
var exported = status.NewSeries[types.NamespacedName](dependencyReady, versionInfo, runtimeNodes)

// recordRuntimeMetrics exports rt's status and the versions of versions that run on it.
func recordRuntimeMetrics(rt *v1alpha1.Runtime, versions []v1alpha1.RuntimeVersion) {
	exported.Set(types.NamespacedName{Namespace: rt.Namespace, Name: rt.Name}, runtimeSamples(rt, versions))
}

// forgetRuntimeMetrics drops the series of a Runtime that is gone.
func forgetRuntimeMetrics(key types.NamespacedName) { exported.Forget(key) }
