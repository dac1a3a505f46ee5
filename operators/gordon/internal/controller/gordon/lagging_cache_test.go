package gordon

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// cacheLag is how far the controller's informer cache trails the API server in these tests:
// every watch event, and so every store update and event handler call, arrives this late, as
// it does on a busy cluster. Without expectations the controller would then count pods it
// already created as missing and create them again.
const cacheLag = 300 * time.Millisecond

// newLaggingInformer is a cache.Options.NewInformer that delays every watch event.
func newLaggingInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	lag := &laggingListWatch{ListerWatcher: lw, inner: toolscache.ToListerWatcherWithContext(lw)}
	return toolscache.NewSharedIndexInformer(lag, obj, resync, indexers)
}

// laggingListWatch serves lists as they are and watches late. The reflector prefers the
// context methods, so those are the ones it overrides.
type laggingListWatch struct {
	toolscache.ListerWatcher
	inner toolscache.ListerWatcherWithContext
}

func (l *laggingListWatch) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return l.inner.ListWithContext(ctx, opts)
}

func (l *laggingListWatch) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := l.inner.WatchWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	return newLaggingWatch(w, cacheLag), nil
}

// laggingWatch forwards each event of a watch lag after it arrived, in order.
type laggingWatch struct {
	inner watch.Interface
	out   chan watch.Event
	done  chan struct{}
	once  sync.Once
}

type timedEvent struct {
	watch.Event
	due time.Time
}

func newLaggingWatch(inner watch.Interface, lag time.Duration) *laggingWatch {
	w := &laggingWatch{inner: inner, out: make(chan watch.Event), done: make(chan struct{})}
	pending := make(chan timedEvent, 10000)
	go func() {
		defer close(pending)
		for ev := range inner.ResultChan() {
			pending <- timedEvent{Event: ev, due: time.Now().Add(lag)}
		}
	}()
	go func() {
		defer close(w.out)
		for ev := range pending {
			time.Sleep(time.Until(ev.due))
			select {
			case w.out <- ev.Event:
			case <-w.done:
				return
			}
		}
	}()
	return w
}

func (w *laggingWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *laggingWatch) Stop() {
	w.once.Do(func() { close(w.done) })
	w.inner.Stop()
}
