package kreruntime

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/quintet-operators/quintet/shared/labelled"
)

// ManagedByLabel marks every object the operator makes, for Runtimes and RuntimeVersions.
const ManagedByLabel, ManagedBy = "app.kubernetes.io/managed-by", "quintet-kre-runtime"

// CacheOptions narrows the manager's cache to the objects the operator made: its memory
// follows what it manages, and it holds no Secret but its own.
var CacheOptions = labelled.CacheOnly(labels.SelectorFromSet(labels.Set{ManagedByLabel: ManagedBy}),
	&appsv1.StatefulSet{}, &appsv1.Deployment{}, &corev1.Service{}, &corev1.Secret{}, &networkingv1.Ingress{}, &corev1.Pod{})
