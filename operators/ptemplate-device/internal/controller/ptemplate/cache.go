package ptemplate

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CacheOptions narrows the manager's cache of DaemonSets and pods to those the operator made.
// Nodes are cached whole (their labels say where KMM loaded a module); Modules are cached
// once KMM's CRD is served.
func CacheOptions(o *ctrl.Options) {
	mine := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{ManagedByLabel: ManagedBy})}
	o.Cache.ByObject = map[client.Object]cache.ByObject{&appsv1.DaemonSet{}: mine, &corev1.Pod{}: mine}
}
