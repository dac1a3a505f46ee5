// Package labelled scopes what a controller watches by the labels its operator puts on what
// it makes: a manager cache that holds only those objects of the kinds it names (so an
// operator's memory follows what it manages, and it holds no Secret but its own), and an
// event handler that maps such an object to the custom resource its label names.
package labelled

import (
	"context"

	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Exists selects the objects that carry the label key, whatever its value. key is an
// operator's constant: an invalid one is a programming error, and panics.
func Exists(key string) labels.Selector {
	selector, err := labels.Parse(key)
	if err != nil {
		panic(err)
	}
	return selector
}

// CacheOnly narrows the manager's cache of each kind of objs to the objects selector selects:
// a cache option for shared/manager.
func CacheOnly(selector labels.Selector, objs ...client.Object) func(*ctrl.Options) {
	return func(o *ctrl.Options) {
		if o.Cache.ByObject == nil {
			o.Cache.ByObject = map[client.Object]cache.ByObject{}
		}
		for _, obj := range objs {
			o.Cache.ByObject[obj] = cache.ByObject{Label: selector}
		}
	}
}

// ToOwner maps an object to the custom resource named by its label key, in its namespace
// (an object without the label maps to nothing): for watches of objects that carry their
// owner's name, such as pods made by a StatefulSet or DaemonSet the owner controls.
func ToOwner(key string) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		name := obj.GetLabels()[key]
		if name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}}}
	})
}
