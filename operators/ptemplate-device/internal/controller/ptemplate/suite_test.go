package ptemplate

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	v1alpha "github.com/quintet-operators/quintet/operators/ptemplate-device/api/v1alpha"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// One API server for the package, with the Ptemplate controller running against it. KMM's
// Module CRD is not installed at start: the first test checks that Ptemplates wait for it,
// then installs it (installKMM) for the others.
var (
	env    *testenv.Env
	writes *testenv.WriteCounter
	events *testenv.EventCounter
	logs   *testenv.LogRecorder
)

// testPolicy is the example's module and device plugin, and a gpu module from a registry's
// kmods/ repositories, as an administrator would list them.
func testPolicy() Policy {
	p := DefaultPolicy()
	p.KernelModules["gpu"] = []string{"registry.example.com/kmods/*"}
	return p
}

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "..", "config", "crd", "bases")},
		AddToScheme:       []func(*runtime.Scheme) error{v1alpha.AddToScheme},
	}, testenv.ManagerOptions{EventSource: "ptemplate-device-test", Customize: CacheOptions}, func(e *testenv.Env, mgr *testenv.Manager) error {
		env, writes, events, logs = e, mgr.Writes, mgr.Events, mgr.Logs
		return (&Reconciler{Client: writes, APIReader: mgr.GetAPIReader(), Recorder: events, Policy: testPolicy()}).SetupWithManager(mgr)
	}))
}
