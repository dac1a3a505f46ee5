package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// One API server for the package, with the Runtime controller running against it.
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
		AddToScheme:       []func(*runtime.Scheme) error{v1alpha1.AddToScheme},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { must(env.Stop()) }()

	mgr, err := env.NewManager(testenv.ManagerOptions{EventSource: "kre-runtime-test", Customize: CacheOptions})
	must(err)
	writes, events, logs = mgr.Writes, mgr.Events, mgr.Logs
	reconciler = &Reconciler{Client: writes, APIReader: mgr.GetAPIReader(), Recorder: events}
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
