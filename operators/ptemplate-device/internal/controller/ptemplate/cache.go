package ptemplate

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/quintet-operators/quintet/shared/ensure"
	"github.com/quintet-operators/quintet/shared/labelled"
	"github.com/quintet-operators/quintet/shared/pods"
)

// CacheOptions narrows the manager's cache of DaemonSets and pods to those the operator made,
// and keeps no pod's spec: of a consumer pod the operator reads its name and status. Nodes
// are cached whole (their labels say where KMM loaded a module); Modules are cached once
// KMM's CRD is served. Neither a DaemonSet's pod template nor a Module's spec is kept
// (ensure.SpecsOutOfCache).
func CacheOptions(o *ctrl.Options) {
	labelled.CacheOnly(labels.SelectorFromSet(labels.Set{ManagedByLabel: ManagedBy}), &appsv1.DaemonSet{}, &corev1.Pod{})(o)
	pods.TrimSpecInCache(func(corev1.PodSpec) corev1.PodSpec { return corev1.PodSpec{} })(o)
	ensure.SpecsOutOfCache(o)
}
