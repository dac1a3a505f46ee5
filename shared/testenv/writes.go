package testenv

import (
	"context"
	"fmt"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WriteCounter is a controller's client that counts every write it sends (create, update,
// patch, delete, status update and patch, failed ones included), all and per namespace, and
// the creates per namespace: what steady-state and over-creation tests assert on. A test
// counts its own namespace's: the objects of the package's other tests stay (envtest runs no
// namespace controller) and their timed passes write whenever they find something changed.
type WriteCounter struct {
	client.Client
	mu      sync.Mutex
	writes  map[string]int64
	creates map[string]int
}

// CountWrites wraps c.
func CountWrites(c client.Client) *WriteCounter {
	return &WriteCounter{Client: c, writes: map[string]int64{}, creates: map[string]int{}}
}

// Writes is the number of writes so far.
func (w *WriteCounter) Writes() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	var n int64
	for _, in := range w.writes {
		n += in
	}
	return n
}

// WritesIn is the number of writes so far of objects in namespace.
func (w *WriteCounter) WritesIn(namespace string) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes[namespace]
}

// Creates is the number of creates tried in namespace so far.
func (w *WriteCounter) Creates(namespace string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.creates[namespace]
}

// CreatesOnceStill waits until a second has gone by without a create tried in namespace, for
// at most timeout, and returns how many were tried by then: a test of a controller that must
// stop trying (a namespace being deleted refuses every create) waits for it to stop.
func (w *WriteCounter) CreatesOnceStill(namespace string, timeout time.Duration) (int, error) {
	last := w.Creates(namespace)
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); {
		time.Sleep(time.Second)
		n := w.Creates(namespace)
		if n == last {
			return n, nil
		}
		last = n
	}
	return last, fmt.Errorf("creates in %s still tried after %s: %d", namespace, timeout, last)
}

// count counts a write of obj, a create when create is true.
func (w *WriteCounter) count(obj client.Object, create bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes[obj.GetNamespace()]++
	if create {
		w.creates[obj.GetNamespace()]++
	}
}

func (w *WriteCounter) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	w.count(obj, true)
	return w.Client.Create(ctx, obj, opts...)
}

func (w *WriteCounter) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	w.count(obj, false)
	return w.Client.Update(ctx, obj, opts...)
}

func (w *WriteCounter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	w.count(obj, false)
	return w.Client.Patch(ctx, obj, patch, opts...)
}

func (w *WriteCounter) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	w.count(obj, false)
	return w.Client.Delete(ctx, obj, opts...)
}

func (w *WriteCounter) Status() client.SubResourceWriter {
	return &statusWriteCounter{SubResourceWriter: w.Client.Status(), w: w}
}

type statusWriteCounter struct {
	client.SubResourceWriter
	w *WriteCounter
}

func (s *statusWriteCounter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	s.w.count(obj, false)
	return s.SubResourceWriter.Update(ctx, obj, opts...)
}

func (s *statusWriteCounter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	s.w.count(obj, false)
	return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}
