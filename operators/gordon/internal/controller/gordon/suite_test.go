package gordon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1 "github.com/quintet-operators/quintet/operators/gordon/api/v1"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// One API server for the package, with the controller running against it.
var (
	env        *testenv.Env
	reconciler *Reconciler
	writes     *writeCounter
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	var err error
	env, err = testenv.Start(testenv.Options{
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "..", "config", "crd", "bases")},
		AddToScheme:       []func(*runtime.Scheme) error{v1.AddToScheme},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { must(env.Stop()) }()

	opts := ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}}
	CacheOptions(&opts)
	opts.Cache.NewInformer = newLaggingInformer
	mgr, err := ctrl.NewManager(env.Config, opts)
	must(err)
	writes = &writeCounter{Client: mgr.GetClient(), podCreates: map[string]int{}}
	reconciler = &Reconciler{Client: writes, Recorder: mgr.GetEventRecorder("gordon-test"), MaxConcurrentReconciles: 2}
	must(reconciler.SetupWithManager(mgr))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- mgr.Start(ctx) }()
	defer func() { cancel(); must(<-done) }()
	return m.Run()
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// writeCounter counts the writes the controller makes through its client, and the pods it
// creates per namespace.
type writeCounter struct {
	client.Client
	n          atomic.Int64
	mu         sync.Mutex
	podCreates map[string]int
}

func (w *writeCounter) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	w.n.Add(1)
	if _, ok := obj.(*corev1.Pod); ok {
		w.mu.Lock()
		w.podCreates[obj.GetNamespace()]++
		w.mu.Unlock()
	}
	return w.Client.Create(ctx, obj, opts...)
}

// podsCreated returns how many pods the controller created in namespace.
func (w *writeCounter) podsCreated(namespace string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.podCreates[namespace]
}

func (w *writeCounter) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	w.n.Add(1)
	return w.Client.Update(ctx, obj, opts...)
}

func (w *writeCounter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	w.n.Add(1)
	return w.Client.Patch(ctx, obj, patch, opts...)
}

func (w *writeCounter) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	w.n.Add(1)
	return w.Client.Delete(ctx, obj, opts...)
}

func (w *writeCounter) Status() client.SubResourceWriter {
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

func reconcileRequest(g *v1.Gordon) ctrl.Request {
	return ctrl.Request{NamespacedName: client.ObjectKeyFromObject(g)}
}
