package runtimeversion

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
)

// dependenciesNotReady names the servers of rt that its status does not say are ready, with
// their counts. Their readiness probes ask each server itself: a ping of MongoDB, NATS's and
// MinIO's health endpoints.
func dependenciesNotReady(rt *v1alpha1.Runtime) []string {
	var out []string
	for _, d := range []struct {
		name   string
		status v1alpha1.ComponentStatus
	}{{"NATS", rt.Status.NATSStreaming}, {"MongoDB", rt.Status.Mongo}, {"MinIO", rt.Status.MinIO}} {
		if !d.status.Ready {
			out = append(out, fmt.Sprintf("%s %d/%d ready", d.name, d.status.ReadyReplicas, d.status.Replicas))
		}
	}
	return out
}

// started says whether any of a version's Deployments asks for replicas: a started version
// keeps running while a dependency restarts (its clients reconnect), and only a version that is
// starting waits for them.
func started(deployments map[string]*appsv1.Deployment) bool {
	for _, d := range deployments {
		if ptr.Deref(d.Spec.Replicas, 1) > 0 {
			return true
		}
	}
	return false
}
