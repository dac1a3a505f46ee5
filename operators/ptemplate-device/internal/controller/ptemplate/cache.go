package ptemplate

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/quintet-operators/quintet/shared/labelled"
)

// CacheOptions narrows the manager's cache of DaemonSets and pods to those the operator made.
// Nodes are cached whole (their labels say where KMM loaded a module); Modules are cached
// once KMM's CRD is served.
var CacheOptions = labelled.CacheOnly(labels.SelectorFromSet(labels.Set{ManagedByLabel: ManagedBy}), &appsv1.DaemonSet{}, &corev1.Pod{})
