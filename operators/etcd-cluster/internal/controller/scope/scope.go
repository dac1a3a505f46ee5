// Package scope is the CoreOS etcd operator's scope rule, which every controller of this
// operator follows: a manager started with --cluster-wide acts on the objects annotated
// etcd.database.coreos.com/scope=clusterwide (in any namespace), any other on the objects
// without that annotation.
package scope

import (
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
)

// Manages says whether a manager (cluster-wide or not) acts on obj.
func Manages(obj client.Object, clusterWide bool) bool {
	return (obj.GetAnnotations()[v1beta2.ScopeAnnotation] == v1beta2.ScopeClusterWide) == clusterWide
}

// Filter is Manages for one manager: it picks the objects that manager acts on.
func Filter(clusterWide bool) func(client.Object) bool {
	return func(o client.Object) bool { return Manages(o, clusterWide) }
}

// Predicate passes the objects a manager acts on.
func Predicate(clusterWide bool) predicate.Predicate {
	return predicate.NewPredicateFuncs(Filter(clusterWide))
}

// ControllerName is base, or base-clusterwide for the cluster-wide manager: both may run at once.
func ControllerName(base string, clusterWide bool) string {
	if clusterWide {
		return base + "-clusterwide"
	}
	return base
}
