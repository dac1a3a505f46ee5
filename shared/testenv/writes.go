package testenv

import (
	"context"
	"sync"
	"sync/atomic"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WriteCounter is a controller's client that counts every write it sends (create, update,
// patch, delete, status update and patch, failed ones included) and the creates per
// namespace: what steady-state and over-creation tests assert on.
type WriteCounter struct {
	client.Client
	n       atomic.Int64
	mu      sync.Mutex
	creates map[string]int
}

// CountWrites wraps c.
func CountWrites(c client.Client) *WriteCounter {
	return &WriteCounter{Client: c, creates: map[string]int{}}
}

// Writes is the number of writes so far.
func (w *WriteCounter) Writes() int64 { return w.n.Load() }

// Creates is the number of creates tried in namespace so far.
func (w *WriteCounter) Creates(namespace string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.creates[namespace]
}

func (w *WriteCounter) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	w.n.Add(1)
	w.mu.Lock()
	w.creates[obj.GetNamespace()]++
	w.mu.Unlock()
	return w.Client.Create(ctx, obj, opts...)
}

func (w *WriteCounter) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	w.n.Add(1)
	return w.Client.Update(ctx, obj, opts...)
}

func (w *WriteCounter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	w.n.Add(1)
	return w.Client.Patch(ctx, obj, patch, opts...)
}

func (w *WriteCounter) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	w.n.Add(1)
	return w.Client.Delete(ctx, obj, opts...)
}

func (w *WriteCounter) Status() client.SubResourceWriter {
	return &statusWriteCounter{SubResourceWriter: w.Client.Status(), n: &w.n}
}

type statusWriteCounter struct {
	client.SubResourceWriter
	n *atomic.Int64
}

func (s *statusWriteCounter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	s.n.Add(1)
	return s.SubResourceWriter.Update(ctx, obj, opts...)
}

func (s *statusWriteCounter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	s.n.Add(1)
	return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}
