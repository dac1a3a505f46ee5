package kreruntime

import (
	"errors"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/ensure"
)

// statefulSetWith is a StatefulSet at generation whose controller last saw generation 1.
func statefulSetWith(replicas, ready int32, generation int64) *appsv1.StatefulSet {
	s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: generation}}
	s.Spec.Replicas = ptr.To(replicas)
	s.Status = appsv1.StatefulSetStatus{ObservedGeneration: 1, ReadyReplicas: ready, UpdatedReplicas: ready}
	return s
}

func TestSetStatus(t *testing.T) {
	rt := func() *v1alpha1.Runtime {
		r := &v1alpha1.Runtime{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: "ns", Generation: 3}}
		r.Spec.NATSStreaming.Replicas = ptr.To[int32](2)
		return r
	}
	ready := func() map[string]*appsv1.StatefulSet {
		return map[string]*appsv1.StatefulSet{Mongo: statefulSetWith(1, 1, 1), NATS: statefulSetWith(2, 2, 1), MinIO: statefulSetWith(1, 1, 1)}
	}
	tests := []struct {
		name            string
		sets            func() map[string]*appsv1.StatefulSet
		err             error
		failures        []string
		ready, degraded string // reasons
		readyStatus     metav1.ConditionStatus
	}{
		{"all ready", ready, nil, nil, conditions.ReasonReady, conditions.ReasonAsExpected, metav1.ConditionTrue},
		{"nothing made yet", func() map[string]*appsv1.StatefulSet { return nil }, nil, nil,
			v1alpha1.ReasonComponentsNotReady, conditions.ReasonAsExpected, metav1.ConditionFalse},
		{"a replica not ready", func() map[string]*appsv1.StatefulSet {
			s := ready()
			s[NATS] = statefulSetWith(2, 1, 1)
			return s
		}, nil, nil, v1alpha1.ReasonComponentsNotReady, conditions.ReasonAsExpected, metav1.ConditionFalse},
		{"a StatefulSet that has not seen its spec", func() map[string]*appsv1.StatefulSet {
			s := ready()
			s[Mongo] = statefulSetWith(1, 1, 2)
			return s
		}, nil, nil, v1alpha1.ReasonComponentsNotReady, conditions.ReasonAsExpected, metav1.ConditionFalse},
		{"an object of someone else's", ready, &ensure.NotOwnedError{Kind: "Service", Name: "kre-nats", Controller: "is controlled by no Runtime"}, nil,
			conditions.ReasonObjectNotOwned, conditions.ReasonObjectNotOwned, metav1.ConditionFalse},
		{"an object the API server rejects", ready, reconcile.TerminalError(errors.New("invalid")), nil,
			conditions.ReasonObjectRejected, conditions.ReasonObjectRejected, metav1.ConditionFalse},
		{"a failed write", ready, errors.New("connection refused"), nil,
			conditions.ReasonReconcileFailed, conditions.ReasonReconcileFailed, metav1.ConditionFalse},
		{"a pod that cannot run: Ready says why, not only that a replica is not ready", func() map[string]*appsv1.StatefulSet {
			s := ready()
			s[Mongo] = statefulSetWith(1, 0, 1)
			return s
		}, nil, []string{`pod kre-mongo-0: CreateContainerConfigError: secret "my-mongo" not found`},
			conditions.ReasonPodsFailing, conditions.ReasonPodsFailing, metav1.ConditionFalse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rt()
			setStatus(r, components(r), tt.sets(), "", "", tt.failures, tt.err)
			got := conditions.Get(r, conditions.ReadyCondition)
			if got.Reason != tt.ready || got.Status != tt.readyStatus || got.ObservedGeneration != 3 {
				t.Errorf("Ready = %+v, want %s %s at generation 3", got, tt.readyStatus, tt.ready)
			}
			if d := conditions.Get(r, conditions.DegradedCondition); d.Reason != tt.degraded {
				t.Errorf("Degraded = %+v, want %s", d, tt.degraded)
			}
		})
	}
}

func TestStartedVersionIsTheNewestStartedVersionOfTheRuntime(t *testing.T) {
	at := func(name, runtime string, state v1alpha1.VersionState, minute int) v1alpha1.RuntimeVersion {
		v := v1alpha1.RuntimeVersion{ObjectMeta: metav1.ObjectMeta{Name: name,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, minute, 0, 0, time.UTC))}}
		v.Spec.RuntimeRef.Name, v.Spec.State = runtime, state
		return v
	}
	versions := []v1alpha1.RuntimeVersion{
		at("v1", "rt", v1alpha1.StateStarted, 1),
		at("v2", "rt", v1alpha1.StateStarted, 2),
		at("v3", "rt", v1alpha1.StateStopped, 3),
		at("v4", "other", v1alpha1.StateStarted, 4),
	}
	if got := startedVersion("rt", versions); got != "v2" {
		t.Errorf("started version = %q, want v2 (the newest Started one of rt)", got)
	}
	if got := startedVersion("rt", versions[2:3]); got != "" {
		t.Errorf("started version = %q, want none", got)
	}
}

func TestSetStatusOfARefusedEntrypointSaysWhyAndKeepsTheFailure(t *testing.T) {
	r := &v1alpha1.Runtime{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: "ns", Generation: 2}}
	setStatus(r, components(r), nil, "", `entrypoint.host "a.example" matches none`, nil, errors.New("connection refused"))
	d := conditions.Get(r, conditions.DegradedCondition)
	if d.Status != metav1.ConditionTrue || d.Reason != v1alpha1.ReasonEntrypointNotAllowed ||
		d.Message != `entrypoint.host "a.example" matches none; connection refused` {
		t.Errorf("Degraded = %+v, want True %s with the refusal and the error", d, v1alpha1.ReasonEntrypointNotAllowed)
	}
	if ready := conditions.Get(r, conditions.ReadyCondition); ready.Status != metav1.ConditionFalse || ready.Reason != v1alpha1.ReasonEntrypointNotAllowed {
		t.Errorf("Ready = %+v, want False %s", ready, v1alpha1.ReasonEntrypointNotAllowed)
	}
}
