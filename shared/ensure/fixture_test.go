package ensure

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/shared/internal/testkind"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// countingReader counts the reads past the cache.
type countingReader struct {
	client.Reader
	reads int
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.reads++
	return r.Reader.Get(ctx, key, obj, opts...)
}

// writeFixture runs Ensure on one object of type T, named w, through a running manager whose
// cache the test shapes, counting the reads past the cache and the writes.
type writeFixture[T client.Object] struct {
	t      *testing.T
	ctx    context.Context
	mgr    *testenv.Manager
	reader *countingReader
	w      Writer
	owner  *testkind.Widget
	key    client.ObjectKey
	empty  func() T             // an empty T, to read into
	cached func() client.Object // an empty object of what the cache holds of a T
}

// newWriteFixture starts a manager whose cache drops managed fields, then applies customize,
// until the test ends, and makes the owner, a Widget, in a new namespace.
func newWriteFixture[T client.Object](t *testing.T, customize func(*ctrl.Options), empty func() T, cached func() client.Object) *writeFixture[T] {
	ctx := t.Context()
	ns := env.NewNamespace(t, "ensure-fixture")
	mgr, err := env.NewManager(testenv.ManagerOptions{Customize: func(o *ctrl.Options) {
		o.Cache.DefaultTransform = cache.TransformStripManagedFields()
		customize(o)
	}})
	if err != nil {
		t.Fatal(err)
	}
	mgr.RunForTest(t)
	owner := &testkind.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns}}
	if err := env.Client.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	reader := &countingReader{Reader: mgr.GetAPIReader()}
	return &writeFixture[T]{t: t, ctx: ctx, mgr: mgr, reader: reader, w: Writer{Client: mgr.Writes, APIReader: reader},
		owner: owner, key: client.ObjectKey{Namespace: ns, Name: "w"}, empty: empty, cached: cached}
}

// ensure runs Ensure once the cache saw the object as the API server holds it, and returns
// the reads past the cache and the writes it made.
func (f *writeFixture[T]) ensure(desired T) (reads int, writes int64) {
	f.t.Helper()
	version := f.server().GetResourceVersion()
	cached := f.cached()
	deadline := time.Now().Add(30 * time.Second)
	for f.mgr.GetClient().Get(f.ctx, f.key, cached) != nil || cached.GetResourceVersion() != version {
		if time.Now().After(deadline) {
			f.t.Fatalf("the cache never saw resourceVersion %s (has %s)", version, cached.GetResourceVersion())
		}
		time.Sleep(10 * time.Millisecond)
	}
	reads, writes = f.reader.reads, f.mgr.Writes.WritesIn(f.key.Namespace)
	if err := f.w.Ensure(f.ctx, f.owner, desired); err != nil {
		f.t.Fatal(err)
	}
	return f.reader.reads - reads, f.mgr.Writes.WritesIn(f.key.Namespace) - writes
}

// server is the object as the API server holds it.
func (f *writeFixture[T]) server() T {
	f.t.Helper()
	obj := f.empty()
	if err := env.Client.Get(f.ctx, f.key, obj); err != nil {
		f.t.Fatal(err)
	}
	return obj
}

// byHand changes the object as a user would.
func (f *writeFixture[T]) byHand(change func(T)) {
	f.t.Helper()
	obj := f.server()
	change(obj)
	if err := env.Client.Update(f.ctx, obj); err != nil {
		f.t.Fatal(err)
	}
}
