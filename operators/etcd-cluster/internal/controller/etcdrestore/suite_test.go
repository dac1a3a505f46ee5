package etcdrestore

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// One API server and manager for the package, running the EtcdRestore reconciler alone: the
// tests play the EtcdCluster reconciler's part by writing the clusters' status.
var (
	env    *testenv.Env
	events *testenv.EventCounter
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "..", "config", "crd", "bases")},
		AddToScheme:       []func(*runtime.Scheme) error{v1beta2.AddToScheme},
	}, testenv.ManagerOptions{FieldOwner: "etcd-cluster", EventSource: "etcdrestore-test"}, func(e *testenv.Env, mgr *testenv.Manager) error {
		env, events = e, mgr.Events
		return (&Reconciler{Client: mgr.Writes, Recorder: mgr.Events}).SetupWithManager(mgr)
	}))
}
