package minimart

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/operators/minimart/api/v1alpha1"
	"github.com/quintet-operators/quintet/shared/labelled"
)

// releaseKinds are the kinds of the objects the chart makes: the operator caches them, owns
// them and restores them when they drift.
var releaseKinds = []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &networkingv1.NetworkPolicy{}}

// CacheOptions narrows the manager's cache to the objects of Minimarts' releases (labelled
// by the post-renderer): its memory follows what it manages.
var CacheOptions = labelled.CacheOnly(labelled.Exists(v1alpha1.MinimartLabel), releaseKinds...)
