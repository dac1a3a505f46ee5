package kreruntime

import (
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

// testEntrypoints allows the sample's host and names under each namespace's own test domain.
var testEntrypoints = EntrypointPolicy{Hosts: []string{DefaultEntrypointHost, "*.{namespace}.apps.test"}, IngressClasses: []string{"public"}}

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "..", "config", "crd", "bases")},
		AddToScheme:       []func(*runtime.Scheme) error{v1alpha1.AddToScheme},
	}, testenv.ManagerOptions{EventSource: "kre-runtime-test", Customize: CacheOptions}, func(e *testenv.Env, mgr *testenv.Manager) error {
		env, writes, events, logs = e, mgr.Writes, mgr.Events, mgr.Logs
		reconciler = &Reconciler{Client: writes, APIReader: mgr.GetAPIReader(), Recorder: events, Entrypoints: testEntrypoints}
		return reconciler.SetupWithManager(mgr)
	}))
}
