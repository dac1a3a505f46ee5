package gordon

import (
	"sync"
	"time"
)

// Replacing failed pods backs off from replacementBackoffInitial, doubling up to
// replacementBackoffMax (the kubelet's crash-loop back-off has the same shape); a Gordon
// whose pods stop failing for twice the maximum starts again from the initial delay.
const (
	replacementBackoffInitial = 10 * time.Second
	replacementBackoffMax     = 5 * time.Minute
)

// replacementBackoff spaces out, per Gordon, the replacement of pods that terminated, so
// that pods which fail as soon as they start (rejected by the kubelet, evicted at once,
// a deadline) are not recreated in a tight loop.
type replacementBackoff struct {
	mu    sync.Mutex
	byKey map[string]*backoffEntry
	now   func() time.Time
}

type backoffEntry struct {
	delay time.Duration // the delay after the last replacement
	last  time.Time     // when the last replacement was made
}

func newReplacementBackoff() *replacementBackoff {
	return &replacementBackoff{byKey: map[string]*backoffEntry{}, now: time.Now}
}

// wait returns how long the Gordon must wait before replacing failed pods; 0 when it may now.
func (b *replacementBackoff) wait(key string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.byKey[key]
	if !ok {
		return 0
	}
	return max(0, e.last.Add(e.delay).Sub(b.now()))
}

// replaced records a replacement of failed pods, and returns the delay before the next one.
func (b *replacementBackoff) replaced(key string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	e, ok := b.byKey[key]
	switch {
	case !ok || now.Sub(e.last) > 2*replacementBackoffMax:
		e = &backoffEntry{delay: replacementBackoffInitial}
		b.byKey[key] = e
	default:
		e.delay = min(2*e.delay, replacementBackoffMax)
	}
	e.last = now
	return e.delay
}

// forget drops a Gordon that no longer exists.
func (b *replacementBackoff) forget(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.byKey, key)
}
