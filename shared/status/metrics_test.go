package status

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quintet-operators/quintet/shared/internal/testkind"
)

// A pass's Patch exports the object's conditions, 1 on the current status and 0 on the two
// others; a condition the object lost, and an object gone, leave no series.
func TestPatchExportsConditionsAndForgetDropsThem(t *testing.T) {
	const kind = "MetricsWidget"
	w := &testkind.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w"}}
	w.Status.Conditions = []metav1.Condition{
		{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Progressing"},
		{Type: "Degraded", Status: metav1.ConditionTrue, Reason: "PodsFailing"},
	}
	// The status is as read: Patch sends nothing, so it needs no client.
	if err := NewPatcher(w, WithConditionMetrics(kind)).Patch(context.Background(), nil, w); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"Ready/True": 0, "Ready/False": 1, "Ready/Unknown": 0, "Degraded/True": 1, "Degraded/False": 0, "Degraded/Unknown": 0}
	if got := seriesOf(t, kind); len(got) != len(want) {
		t.Errorf("series %v, want %v", got, want)
	}
	for series, value := range want {
		conditionType, status, _ := strings.Cut(series, "/")
		if got := testutil.ToFloat64(conditionGauge.WithLabelValues(kind, "ns", "w", conditionType, status)); got != value {
			t.Errorf("%s: %v, want %v", series, got, value)
		}
	}

	w.Status.Conditions = w.Status.Conditions[:1] // Degraded is gone
	recordConditions(kind, w)
	if got := seriesOf(t, kind); len(got) != 3 {
		t.Errorf("after Degraded went: series %v, want Ready's 3", got)
	}
	ForgetConditions(kind, types.NamespacedName{Namespace: "ns", Name: "w"})
	if got := seriesOf(t, kind); len(got) != 0 {
		t.Errorf("after the object went: series %v, want none", got)
	}
}

// seriesOf lists the condition series of kind, as type/status.
func seriesOf(t *testing.T, kind string) []string {
	t.Helper()
	ch := make(chan prometheus.Metric)
	go func() { conditionGauge.Collect(ch); close(ch) }()
	var out []string
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		labels := map[string]string{}
		for _, l := range d.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["kind"] == kind {
			out = append(out, labels["type"]+"/"+labels["status"])
		}
	}
	return out
}
