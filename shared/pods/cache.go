package pods

import (
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
)

// TrimSpecInCache is a cache option for a manager that reads, of its pods' specs, only what
// keep returns: the cache holds each pod with keep's spec, its metadata and status whole. A
// pod's spec is most of it (about 2.2 KB of a 4 KB pod in JSON, for the servers kre-runtime
// runs) and, at a thousand custom resources, a large part of a manager's heap.
//
// It runs before the manager's DefaultTransform (shared/manager's strips managedFields), and
// applies to the pods whose cache.ByObject sets no Transform of its own. Reads through the
// manager's client see the trimmed spec; a write must then be a patch computed from that
// object (client.MergeFrom), never an Update, which would send the trimmed spec.
func TrimSpecInCache(keep func(corev1.PodSpec) corev1.PodSpec) func(*ctrl.Options) {
	return func(o *ctrl.Options) {
		next := o.Cache.DefaultTransform
		o.Cache.DefaultTransform = func(obj any) (any, error) {
			if pod, ok := obj.(*corev1.Pod); ok {
				pod.Spec = keep(pod.Spec)
			}
			if next == nil {
				return obj, nil
			}
			return next(obj)
		}
	}
}
