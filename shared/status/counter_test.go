package status

import (
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
	c.Of("ns", "one", "b").Add(2)
	c.Start("ns", "one") // a later pass keeps the count
	if v := testutil.ToFloat64(c.Of("ns", "one", "b")); v != 2 {
		t.Errorf("one/b = %v, want 2", v)
	}
	if v := testutil.ToFloat64(c.Of("ns", "one", "a")); v != 0 {
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
	c.Of("ns", "one").Inc()
	if v := testutil.ToFloat64(c.Of("ns", "one")); v != 1 {
		t.Errorf("one = %v, want 1", v)
	}
	c.Forget("ns", "one")
	if n := testutil.CollectAndCount(c); n != 0 {
		t.Errorf("%d series after the object went", n)
	}
}
