package gordon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
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
	writes     *testenv.WriteCounter
	events     *testenv.EventCounter
	logs       *testenv.LogRecorder
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

	var logger logr.Logger
	logs, logger = testenv.NewLogRecorder()
	opts := ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, Logger: logger}
	CacheOptions(&opts)
	opts.Cache.NewInformer = newLaggingInformer
	mgr, err := ctrl.NewManager(env.Config, opts)
	must(err)
	writes = testenv.CountWrites(mgr.GetClient())
	events = testenv.CountEvents(mgr.GetEventRecorder("gordon-test"))
	reconciler = &Reconciler{Client: writes, Recorder: events, MaxConcurrentReconciles: 2}
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

func reconcileRequest(g *v1.Gordon) ctrl.Request {
	return ctrl.Request{NamespacedName: client.ObjectKeyFromObject(g)}
}
