package runtimeversion

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
	"github.com/quintet-operators/quintet/shared/conditions"
)

func TestSetStatus(t *testing.T) {
	version := func(state v1alpha1.VersionState) *v1alpha1.RuntimeVersion {
		rv := &v1alpha1.RuntimeVersion{ObjectMeta: metav1.ObjectMeta{Name: "v", Generation: 2}}
		rv.Spec.State = state
		rv.Spec.Nodes = []v1alpha1.Node{{Name: "a"}}
		rv.Spec.Workflows = []v1alpha1.Workflow{{Name: "w", Entrypoint: "W", Sequential: []string{"a"}}}
		return rv
	}
	// deployment: replicas pods in all, updated of the current spec, ready of them all.
	deployment := func(want, replicas, updated, ready int32) *appsv1.Deployment {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
		d.Spec.Replicas = ptr.To(want)
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: replicas, UpdatedReplicas: updated, ReadyReplicas: ready}
		return d
	}
	both := func(d *appsv1.Deployment) map[string]*appsv1.Deployment {
		return map[string]*appsv1.Deployment{EntrypointComponent: deployment(1, 1, 1, 1), "a": d}
	}
	tests := []struct {
		name        string
		state       v1alpha1.VersionState
		deployments map[string]*appsv1.Deployment
		failures    []string
		waiting     []string
		ready       string
		progressing metav1.ConditionStatus
	}{
		{"all ready", v1alpha1.StateStarted, both(deployment(1, 1, 1, 1)), nil, nil, conditions.ReasonReady, metav1.ConditionFalse},
		{"nothing made yet", v1alpha1.StateStarted, nil, nil, nil, v1alpha1.ReasonNodesNotReady, metav1.ConditionTrue},
		{"a new pod starting while the earlier one serves", v1alpha1.StateStarted, both(deployment(1, 2, 1, 1)), nil, nil,
			v1alpha1.ReasonNodesNotReady, metav1.ConditionTrue},
		{"a new pod failing while the earlier one serves", v1alpha1.StateStarted, both(deployment(1, 2, 1, 1)),
			[]string{`pod v-a-1: CreateContainerConfigError: secret "s" not found`}, nil, conditions.ReasonPodsFailing, metav1.ConditionTrue},
		{"stopped", v1alpha1.StateStopped, map[string]*appsv1.Deployment{EntrypointComponent: deployment(0, 0, 0, 0)}, nil, nil,
			v1alpha1.ReasonStopped, metav1.ConditionFalse},
		{"waiting for MongoDB, scaled to zero", v1alpha1.StateStarted, both(deployment(0, 0, 0, 0)), nil, []string{"MongoDB 0/1 ready"},
			v1alpha1.ReasonWaitingForDependencies, metav1.ConditionTrue},
		{"stopped while the Runtime's servers start", v1alpha1.StateStopped, both(deployment(0, 0, 0, 0)), nil, []string{"MongoDB 0/1 ready"},
			v1alpha1.ReasonStopped, metav1.ConditionFalse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rv := version(tt.state)
			setStatus(rv, tt.deployments, tt.failures, tt.waiting, nil)
			if got := conditions.Get(rv, conditions.ReadyCondition); got.Reason != tt.ready || got.ObservedGeneration != 2 {
				t.Errorf("Ready = %+v, want reason %s at generation 2", got, tt.ready)
			}
			if got := conditions.Get(rv, conditions.ProgressingCondition); got.Status != tt.progressing {
				t.Errorf("Progressing = %+v, want %s", got, tt.progressing)
			}
		})
	}
}

func TestDependenciesNotReadyNamesEachServerNotReady(t *testing.T) {
	rt := &v1alpha1.Runtime{}
	rt.Status.NATSStreaming = v1alpha1.ComponentStatus{Replicas: 2, ReadyReplicas: 2, Ready: true}
	rt.Status.Mongo = v1alpha1.ComponentStatus{Replicas: 1, ReadyReplicas: 0}
	got := dependenciesNotReady(rt) // MinIO has reported nothing yet
	if want := []string{"MongoDB 0/1 ready", "MinIO 0/0 ready"}; !slices.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
	rt.Status.Mongo = v1alpha1.ComponentStatus{Replicas: 1, ReadyReplicas: 1, Ready: true}
	rt.Status.MinIO = v1alpha1.ComponentStatus{Replicas: 1, ReadyReplicas: 1, Ready: true}
	if got := dependenciesNotReady(rt); got != nil {
		t.Errorf("every server ready: %q", got)
	}
}
