package runtime

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ManagedByLabel marks every object the operator makes, for Runtimes and RuntimeVersions.
const ManagedByLabel, ManagedBy = "app.kubernetes.io/managed-by", "quintet-kre-runtime"

// CacheOptions narrows the manager's cache to the objects the operator made: its memory
// follows what it manages, and it holds no Secret but its own.
func CacheOptions(o *ctrl.Options) {
	mine := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{ManagedByLabel: ManagedBy})}
	o.Cache.ByObject = map[client.Object]cache.ByObject{
		&appsv1.StatefulSet{}: mine, &appsv1.Deployment{}: mine, &corev1.Service{}: mine,
		&corev1.Secret{}: mine, &networkingv1.Ingress{}: mine, &corev1.Pod{}: mine,
	}
}
