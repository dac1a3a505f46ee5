package status

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestCounterStartsEveryValueAtZeroCountsAndForgetsOneObject(t *testing.T) {
	c := NewCounter(prometheus.CounterOpts{Name: "test_things_total", Help: "Things."}, "reason", "a", "b")
	c.Start("ns", "one")
	c.Start("ns", "two")
	if n := testutil.CollectAndCount(c); n != 4 {
		t.Fatalf("%d series after two objects started, want 4 (two values each)", n)
	}
	c.Add("ns", "one", 2, "b")
	c.Start("ns", "one") // a later pass keeps the count
	if v := c.Value("ns", "one", "b"); v != 2 {
		t.Errorf("one/b = %v, want 2", v)
	}
	if v := c.Value("ns", "one", "a"); v != 0 {
		t.Errorf("one/a = %v, want 0", v)
	}
	c.Forget("ns", "one")
	if n := testutil.CollectAndCount(c); n != 2 {
		t.Errorf("%d series after one object went, want two's 2", n)
	}
}

func TestCounterWithoutALabel(t *testing.T) {
	c := NewCounter(prometheus.CounterOpts{Name: "test_events_total", Help: "Events."}, "")
	c.Start("ns", "one")
	c.Add("ns", "one", 1)
	if v := c.Value("ns", "one"); v != 1 {
		t.Errorf("one = %v, want 1", v)
	}
	c.Forget("ns", "one")
	if n := testutil.CollectAndCount(c); n != 0 {
		t.Errorf("%d series after the object went", n)
	}
}

func TestCounterServesItsSeriesAsARegisteredCollector(t *testing.T) {
	c := NewCounter(prometheus.CounterOpts{Name: "test_replaced_total", Help: "Replaced."}, "reason", "a", "b")
	registry := prometheus.NewPedanticRegistry()
	registry.MustRegister(c)
	c.Start("ns", "one")
	c.Add("ns", "one", 3, "a")
	want := `# HELP test_replaced_total Replaced.
# TYPE test_replaced_total counter
test_replaced_total{name="one",namespace="ns",reason="a"} 3
test_replaced_total{name="one",namespace="ns",reason="b"} 0
`
	if err := testutil.GatherAndCompare(registry, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

func TestCounterRefusesAValueItWasNotMadeWith(t *testing.T) {
	c := NewCounter(prometheus.CounterOpts{Name: "test_refused_total", Help: "Refused."}, "reason", "a")
	defer func() {
		if recover() == nil {
			t.Error("an unknown label value was counted")
		}
	}()
	c.Add("ns", "one", 1, "z")
}
