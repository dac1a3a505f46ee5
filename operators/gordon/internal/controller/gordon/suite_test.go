package gordon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

	mgr, err := env.NewManager(testenv.ManagerOptions{EventSource: "gordon-test", Customize: func(o *ctrl.Options) {
		CacheOptions(o)
		o.Cache.NewInformer = newLaggingInformer
	}})
	must(err)
	writes, events, logs = mgr.Writes, mgr.Events, mgr.Logs
	reconciler = &Reconciler{Client: writes, Recorder: events, MaxConcurrentReconciles: 2}
	must(reconciler.SetupWithManager(mgr))
	ctx, cancel := context.WithCancel(context.Background())
	wait := mgr.Run(ctx)
	defer func() { cancel(); must(wait()) }()
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
