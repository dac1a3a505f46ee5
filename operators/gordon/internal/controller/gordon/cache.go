package gordon

import (
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	v1 "github.com/quintet-operators/quintet/operators/gordon/api/v1"
	"github.com/quintet-operators/quintet/shared/labelled"
	"github.com/quintet-operators/quintet/shared/pods"
)

// CacheOptions narrows the manager's pod cache to pods that carry the Gordon label, so the
// operator's memory follows the pods it manages, not every pod in the cluster; of each pod's
// spec it keeps the node, all the operator reads (its metadata and status stay whole).
func CacheOptions(o *ctrl.Options) {
	labelled.CacheOnly(labelled.Exists(v1.GordonLabel), &corev1.Pod{})(o)
	pods.TrimInCache(func(p *corev1.Pod) { p.Spec = corev1.PodSpec{NodeName: p.Spec.NodeName} })(o)
}
