package kreruntime

import "testing"

func TestPodsAreReadOnlyWhileAWorkloadWithPodsHasNotSettled(t *testing.T) {
	settled := Workload{Generation: 2, ObservedGeneration: 2, Want: 3, Replicas: 3, ReadyReplicas: 3, UpdatedReplicas: 3}
	tests := []struct {
		name   string
		change func(*Workload)
		want   bool
	}{
		{"settled", func(*Workload) {}, false},
		{"a replica unready (a crash loop, an image not pulled, a probe failing)", func(w *Workload) { w.ReadyReplicas = 2 }, true},
		{"a spec its controller has not seen", func(w *Workload) { w.Generation = 3 }, true},
		{"rolling: ready pods of the earlier spec", func(w *Workload) { w.UpdatedReplicas = 1 }, true},
		{"a surplus pod (a Deployment's surge)", func(w *Workload) { w.Replicas = 4 }, true},
		{"scaling up", func(w *Workload) { w.Want = 4 }, true},
		{"no pods yet", func(w *Workload) { *w = Workload{Generation: 1, Want: 1} }, false},
		{"scaled to zero", func(w *Workload) { *w = Workload{Generation: 3, ObservedGeneration: 3} }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := settled
			tt.change(&w)
			if got := PodsToRead(settled, w); got != tt.want {
				t.Errorf("PodsToRead(settled, %+v) = %v, want %v", w, got, tt.want)
			}
		})
	}
	if PodsToRead() {
		t.Error("PodsToRead() with no workloads = true")
	}
}
