package kreruntime

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestPodsAreReadOnlyWhileAWorkloadWithPodsHasNotSettled(t *testing.T) {
	settled := workload{generation: 2, observedGeneration: 2, want: 3, replicas: 3, readyReplicas: 3, updatedReplicas: 3}
	tests := []struct {
		name   string
		change func(*workload)
		want   bool
	}{
		{"settled", func(*workload) {}, false},
		{"a replica unready (a crash loop, an image not pulled, a probe failing)", func(w *workload) { w.readyReplicas = 2 }, true},
		{"a spec its controller has not seen", func(w *workload) { w.generation = 3 }, true},
		{"rolling: ready pods of the earlier spec", func(w *workload) { w.updatedReplicas = 1 }, true},
		{"a surplus pod (a Deployment's surge)", func(w *workload) { w.replicas = 4 }, true},
		{"scaling up", func(w *workload) { w.want = 4 }, true},
		{"no pods yet", func(w *workload) { *w = workload{generation: 1, want: 1} }, false},
		{"scaled to zero", func(w *workload) { *w = workload{generation: 3, observedGeneration: 3} }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := settled
			tt.change(&w)
			if got := unsettled(w); got != tt.want {
				t.Errorf("unsettled(%+v) = %v, want %v", w, got, tt.want)
			}
		})
	}
	if PodsToRead(map[string]*appsv1.StatefulSet{}) {
		t.Error("PodsToRead() with no workloads = true")
	}
}

func TestPodsToReadReadsStatefulSetsAndDeploymentsAlike(t *testing.T) {
	meta := metav1.ObjectMeta{Generation: 2}
	set := &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1)},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 1, ReadyReplicas: 1, UpdatedReplicas: 1}}
	deployment := &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 1, ReadyReplicas: 1, UpdatedReplicas: 1}}
	if PodsToRead(map[string]*appsv1.StatefulSet{"a": set}) || PodsToRead(map[string]*appsv1.Deployment{"a": deployment}) {
		t.Error("a settled StatefulSet or Deployment has pods to read")
	}
	set.Status.ReadyReplicas, deployment.Status.ReadyReplicas = 0, 0
	if !PodsToRead(map[string]*appsv1.StatefulSet{"a": set}) || !PodsToRead(map[string]*appsv1.Deployment{"a": deployment}) {
		t.Error("an unready StatefulSet or Deployment has no pods to read")
	}
}

func TestAnUnsettledWorkloadIsLookedAtAgainAndASettledOneIsNot(t *testing.T) {
	tests := []struct {
		name      string
		unsettled bool
		graceEnds time.Duration
		want      time.Duration
	}{
		{"settled: only a watch wakes it", false, 0, 0},
		{"settled, whatever a pod's grace", false, time.Second, 0},
		{"unsettled: the recheck", true, 0, UnsettledRecheck},
		{"a pod's grace ends first", true, 3 * time.Second, 3 * time.Second},
		{"a pod's grace ends later than the recheck", true, time.Minute, UnsettledRecheck},
	}
	for _, tt := range tests {
		if got := recheckAfter(tt.unsettled, tt.graceEnds); got != tt.want {
			t.Errorf("%s: recheckAfter(%v, %v) = %v, want %v", tt.name, tt.unsettled, tt.graceEnds, got, tt.want)
		}
	}
}
