package etcdbackup

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup/backuptest"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// One API server and manager for the package, and the real servers backups go between: an
// etcd member and an S3 store, on loopback.
var (
	env    *testenv.Env
	events *testenv.EventCounter
	store  *backuptest.S3
	member *backuptest.Server
)

// bucket is the store's bucket the tests back up to.
const bucket = "backups"

// testOperatorImage is the image the manager says it runs, which backup Jobs run.
const testOperatorImage = "registry.example/quintet/etcd-cluster:test"

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	var stop func()
	var err error
	store, member, stop, err = backuptest.StartAll(bucket)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	return testenv.Main(m, testenv.Options{
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "..", "config", "crd", "bases")},
		AddToScheme:       []func(*runtime.Scheme) error{v1beta2.AddToScheme},
	}, testenv.ManagerOptions{FieldOwner: "etcd-cluster", EventSource: "etcdbackup-test", Customize: func(o *ctrl.Options) {
		// As the manager's --max-concurrent-reconciles defaults: failing backups that wait
		// on a store leave workers for the others.
		o.Controller.MaxConcurrentReconciles = 4
	}}, func(e *testenv.Env, mgr *testenv.Manager) error {
		env, events = e, mgr.Events
		// The operator allows the loopback servers (the member and the store), as an
		// administrator lists a store inside the cluster; never the API server.
		loopback, err := backup.ParseAllowlist("127.0.0.0/8")
		if err != nil {
			return err
		}
		apiServer, err := backup.APIServerAddresses(e.Config)
		if err != nil {
			return err
		}
		return (&Reconciler{Client: mgr.Writes, APIReader: mgr.GetAPIReader(), Recorder: mgr.Events, OperatorImage: testOperatorImage,
			EtcdEndpoints: loopback, S3: backup.Reach{Internal: loopback, APIServer: apiServer}}).SetupWithManager(mgr)
	})
}
