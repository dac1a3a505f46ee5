package minimart

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/operators/minimart/api/v1alpha1"
)

// CacheOptions narrows the manager's cache to the objects of Minimarts' releases (labelled
// by the post-renderer): its memory follows what it manages.
func CacheOptions(o *ctrl.Options) {
	req, err := labels.NewRequirement(v1alpha1.MinimartLabel, selection.Exists, nil)
	if err != nil {
		panic(err)
	}
	mine := cache.ByObject{Label: labels.NewSelector().Add(*req)}
	o.Cache.ByObject = map[client.Object]cache.ByObject{&appsv1.Deployment{}: mine, &corev1.Service{}: mine}
}
