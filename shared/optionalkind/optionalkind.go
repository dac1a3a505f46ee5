// Package optionalkind lets a controller own objects of another project's API (KMM's Module,
// cert-manager's Certificate) that the cluster may not serve: the manager starts without that
// CRD, and the controller starts watching the kind the first time it finds it served, with no
// restart.
package optionalkind

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// DefaultRecheck is how long a Watch trusts that its kind is not served before it asks the
// API server again.
const DefaultRecheck = 10 * time.Second

// Watch is a controller's watch on the objects of one kind it controls, started once the kind
// is served.
type Watch struct {
	mapper meta.RESTMapper
	gvk    schema.GroupVersionKind
	start  func() error
	// Recheck: after finding the kind not served, Served says so without asking again for
	// this long. Each ask of a kind not served is a discovery request (the RESTMapper looks
	// again on a miss), and every object's pass asks: a thousand objects waiting for KMM
	// would otherwise ask 4000 times a minute.
	Recheck time.Duration

	mu        sync.Mutex
	watching  bool
	notServed time.Time // when the kind was last found not served
}

// Owned prepares the watch of c, built by mgr, on the objects of kind gvk that owner's kind
// controls; Served starts it.
func Owned(mgr ctrl.Manager, c controller.Controller, gvk schema.GroupVersionKind, owner client.Object) *Watch {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	enqueue := handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), owner, handler.OnlyControllerOwner())
	return &Watch{mapper: mgr.GetRESTMapper(), gvk: gvk, Recheck: DefaultRecheck, start: func() error {
		return c.Watch(source.Kind(mgr.GetCache(), client.Object(obj), enqueue))
	}}
}

// Served reports whether the cluster serves the kind (as of Recheck ago at most, while it
// does not); the first time it does, it starts the watch.
func (w *Watch) Served() (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watching {
		return true, nil
	}
	if !w.notServed.IsZero() && time.Since(w.notServed) < w.Recheck {
		return false, nil
	}
	_, err := w.mapper.RESTMapping(w.gvk.GroupKind(), w.gvk.Version)
	switch {
	case meta.IsNoMatchError(err):
		w.notServed = time.Now()
		return false, nil
	case err != nil:
		return false, err
	}
	if err := w.start(); err != nil {
		return false, err
	}
	w.watching = true
	return true, nil
}
