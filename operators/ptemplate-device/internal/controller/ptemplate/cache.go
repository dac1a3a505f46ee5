package ptemplate

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/shared/ensure"
	"github.com/quintet-operators/quintet/shared/labelled"
	"github.com/quintet-operators/quintet/shared/pods"
)

// CacheOptions narrows the manager's cache of DaemonSets and pods to those the operator made,
// and keeps no pod's spec: of a consumer pod the operator reads its name and status. Nodes
// are cached whole (their labels say where KMM loaded a module); Modules are cached once
// KMM's CRD is served, and the operator reads its Modules from there, not from the API server
// (the client reads unstructured objects past the cache unless told). Neither a DaemonSet's
// pod template nor a Module's spec is kept (ensure.SpecsOutOfCache).
func CacheOptions(o *ctrl.Options) {
	labelled.CacheOnly(labels.SelectorFromSet(labels.Set{ManagedByLabel: ManagedBy}), &appsv1.DaemonSet{}, &corev1.Pod{})(o)
	pods.TrimInCache(func(p *corev1.Pod) { p.Spec = corev1.PodSpec{} })(o)
	ensure.SpecsOutOfCache(o)
	if o.Client.Cache == nil {
		o.Client.Cache = &client.CacheOptions{}
	}
	o.Client.Cache.Unstructured = true
}
