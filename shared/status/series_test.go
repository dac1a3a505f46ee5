package status

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"
)

var (
	testMembers = NewGauge(prometheus.GaugeOpts{Name: "test_members", Help: "Members."}, []string{"namespace", "name", "state"})
	testReady   = NewGauge(prometheus.GaugeOpts{Name: "test_ready", Help: "Ready."}, []string{"namespace", "name"})
)

func TestSeriesServeWhatEachObjectGivesNowAndForgetTheGone(t *testing.T) {
	s := NewSeries[types.NamespacedName](testMembers, testReady)
	registry := prometheus.NewPedanticRegistry()
	registry.MustRegister(s)
	one, two := types.NamespacedName{Namespace: "ns", Name: "one"}, types.NamespacedName{Namespace: "ns", Name: "two"}
	s.Set(one, []Sample{{testMembers, []string{"ns", "one", "desired"}, 3}, {testMembers, []string{"ns", "one", "learner"}, 1}})
	s.Set(two, []Sample{{testReady, []string{"ns", "two"}, 1}})
	s.Set(one, []Sample{{testMembers, []string{"ns", "one", "desired"}, 5}}) // the learner is gone
	want := `# HELP test_members Members.
# TYPE test_members gauge
test_members{name="one",namespace="ns",state="desired"} 5
# HELP test_ready Ready.
# TYPE test_ready gauge
test_ready{name="two",namespace="ns"} 1
`
	if err := testutil.GatherAndCompare(registry, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if v, ok := s.Value(testMembers, "ns", "one", "desired"); !ok || v != 5 {
		t.Errorf("Value = %v, %t; want 5, true", v, ok)
	}
	s.Forget(one)
	if n := testutil.CollectAndCount(s); n != 1 {
		t.Errorf("%d series after one object went, want two's 1", n)
	}
	if _, ok := s.Value(testMembers, "ns", "one", "desired"); ok {
		t.Error("a forgotten object's series still has a value")
	}
}

func TestSeriesScrapeFailsOnASampleThatDoesNotFitItsGauge(t *testing.T) {
	other := NewGauge(prometheus.GaugeOpts{Name: "test_other", Help: "Not the series'."}, []string{"namespace", "name"})
	for name, sample := range map[string]Sample{
		"a gauge the series was not made with": {other, []string{"ns", "one"}, 1},
		"a label too few":                      {testMembers, []string{"ns", "one"}, 1},
		"a label value not UTF-8":              {testMembers, []string{"ns", "one", "\xff"}, 1},
	} {
		t.Run(name, func(t *testing.T) {
			s := NewSeries[string](testMembers, testReady)
			registry := prometheus.NewPedanticRegistry()
			registry.MustRegister(s)
			s.Set("one", []Sample{sample})
			if _, err := registry.Gather(); err == nil {
				t.Error("the scrape served it")
			}
		})
	}
}

// BenchmarkSeriesHeap is the heap that four gauge series of each of 1000 objects hold, kept
// in GaugeVecs (as before) and in a Series, in one run.
func BenchmarkSeriesHeap(b *testing.B) {
	const objects = 1000
	labels := func(i int) []string { return []string{fmt.Sprintf("ns-%03d", i/10), fmt.Sprintf("copy-%04d", i)} }
	held := func(fill func() any) float64 {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		kept := fill()
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(kept)
		return float64(after.HeapAlloc-before.HeapAlloc) / objects
	}
	var vecs, series float64
	for range b.N {
		vecs = held(func() any {
			gauges := make([]*prometheus.GaugeVec, 4)
			for g := range gauges {
				gauges[g] = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: fmt.Sprintf("g%d", g), Help: "G."}, []string{"namespace", "name"})
				for i := range objects {
					gauges[g].WithLabelValues(labels(i)...).Set(float64(i))
				}
			}
			return gauges
		})
		series = held(func() any {
			gauges := make([]*Gauge, 4)
			for g := range gauges {
				gauges[g] = NewGauge(prometheus.GaugeOpts{Name: fmt.Sprintf("g%d", g), Help: "G."}, []string{"namespace", "name"})
			}
			s := NewSeries[string](gauges...)
			for i := range objects {
				l := labels(i)
				samples := make([]Sample, len(gauges))
				for g := range gauges {
					samples[g] = Sample{gauges[g], l, float64(i)}
				}
				s.Set(l[1], samples)
			}
			return s
		})
	}
	b.ReportMetric(vecs, "B/object-gaugevec")
	b.ReportMetric(series, "B/object-series")
	b.ReportMetric(vecs/series, "ratio")
}
