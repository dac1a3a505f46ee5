package pods

import (
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
)

// TrimInCache is a cache option for a manager that reads of its pods only part of their spec
// or status: trim drops the rest from each pod before the cache holds it. A pod's spec is most
// of it (about 2.2 KB of a 4 KB pod in JSON, for the servers kre-runtime runs) and, at a
// thousand custom resources, a large part of a manager's heap; its status is most of the rest.
//
// It runs before the manager's DefaultTransform (shared/manager's strips managedFields), and
// applies to the pods whose cache.ByObject sets no Transform of its own. Reads through the
// manager's client see the trimmed pod; a write must then be a patch computed from that
// object (client.MergeFrom), never an Update, which would send the trimmed spec.
func TrimInCache(trim func(*corev1.Pod)) func(*ctrl.Options) {
	return func(o *ctrl.Options) {
		next := o.Cache.DefaultTransform
		o.Cache.DefaultTransform = func(obj any) (any, error) {
			if pod, ok := obj.(*corev1.Pod); ok {
				trim(pod)
			}
			if next == nil {
				return obj, nil
			}
			return next(obj)
		}
	}
}
