package gordon

import (
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
	os.Exit(testenv.Main(m, testenv.Options{
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "..", "config", "crd", "bases")},
		AddToScheme:       []func(*runtime.Scheme) error{v1.AddToScheme},
	}, testenv.ManagerOptions{EventSource: "gordon-test", Customize: func(o *ctrl.Options) {
		CacheOptions(o)
		o.Cache.NewInformer = newLaggingInformer
		o.Controller.MaxConcurrentReconciles = 2
	}}, func(e *testenv.Env, mgr *testenv.Manager) error {
		env, writes, events, logs = e, mgr.Writes, mgr.Events, mgr.Logs
		reconciler = &Reconciler{Client: writes, Recorder: events}
		return reconciler.SetupWithManager(mgr)
	}))
}

func reconcileRequest(g *v1.Gordon) ctrl.Request {
	return ctrl.Request{NamespacedName: client.ObjectKeyFromObject(g)}
}
