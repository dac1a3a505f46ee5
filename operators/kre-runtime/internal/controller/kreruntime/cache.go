package kreruntime

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/quintet-operators/quintet/shared/ensure"
	"github.com/quintet-operators/quintet/shared/labelled"
)

// ManagedByLabel marks every object the operator makes, for Runtimes and RuntimeVersions.
const ManagedByLabel, ManagedBy = "app.kubernetes.io/managed-by", "quintet-kre-runtime"

// CacheOptions narrows the manager's cache to the objects the operator made: its memory
// follows what it manages, and it holds no Secret but its own. It holds no pods (a pass reads
// them from the API server only while a workload of theirs has not settled: PodsToRead), and
// of its Services and Secrets the metadata alone (the controllers watch them with
// builder.OnlyMetadata, and ensure.CheckedVersions says when one must be read whole), so the
// manager keeps no credentials in memory; of its StatefulSets and Deployments, no pod template
// (ensure.SpecsOutOfCache).
func CacheOptions(o *ctrl.Options) {
	labelled.CacheOnly(labels.SelectorFromSet(labels.Set{ManagedByLabel: ManagedBy}),
		&appsv1.StatefulSet{}, &appsv1.Deployment{}, &corev1.Service{}, &corev1.Secret{}, &networkingv1.Ingress{})(o)
	ensure.SpecsOutOfCache(o)
}
