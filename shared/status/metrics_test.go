package status

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quintet-operators/quintet/shared/internal/testkind"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// A pass's Patch exports the object's conditions, 1 on the current status and 0 on the two
// others; a condition the object lost, and an object gone, leave no series.
func TestPatchExportsConditionsAndForgetDropsThem(t *testing.T) {
	const kind = "MetricsWidget"
	w := &testkind.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", ResourceVersion: "1"}} // as read
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
	series, err := testenv.Series("quintet_resource_condition", map[string]string{"kind": kind})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(series))
	for _, s := range series {
		out = append(out, s.Labels["type"]+"/"+s.Labels["status"])
	}
	return out
}
