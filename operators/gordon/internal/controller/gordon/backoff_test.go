package gordon

import (
	"testing"
	"time"
)

func TestReplacementBackoffDoublesUpToItsMaximumAndResets(t *testing.T) {
	b := newReplacementBackoff()
	now := time.Now()
	b.now = func() time.Time { return now }
	const key = "ns/g"
	if b.wait(key) != 0 {
		t.Fatal("a Gordon's first failed pod must be replaced at once")
	}
	delays := make([]time.Duration, 0, 8)
	for range 8 {
		d := b.replaced(key)
		delays = append(delays, d)
		if got := b.wait(key); got != d {
			t.Fatalf("right after a replacement wait = %s, want %s", got, d)
		}
		now = now.Add(d)
		if got := b.wait(key); got != 0 {
			t.Fatalf("after the delay wait = %s, want 0", got)
		}
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second,
		160 * time.Second, 5 * time.Minute, 5 * time.Minute, 5 * time.Minute}
	for i := range want {
		if delays[i] != want[i] {
			t.Fatalf("delays = %v, want %v", delays, want)
		}
	}
	now = now.Add(2*replacementBackoffMax + time.Second)
	if d := b.replaced(key); d != replacementBackoffInitial {
		t.Fatalf("after %s without failures the delay = %s, want %s again", 2*replacementBackoffMax, d, replacementBackoffInitial)
	}
	b.forget(key)
	if b.wait(key) != 0 {
		t.Fatal("a forgotten Gordon must not wait")
	}
}
