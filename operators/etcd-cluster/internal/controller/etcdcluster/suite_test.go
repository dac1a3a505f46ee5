package etcdcluster

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup/backuptest"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/jobs"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/membership"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// One API server for the package, with two managers against it, as the CoreOS operator is
// deployed: one for its namespaces, and one started with --cluster-wide. Each writes as its
// own field manager, as cmd/main.go sets it up, so a test can tell which one wrote what.
var (
	env *testenv.Env
	// The namespaced manager: its reconciler, cache, writes, Events and log lines.
	reconciler *Reconciler
	cached     cache.Cache
	writes     *testenv.WriteCounter
	events     *testenv.EventCounter
	logs       *testenv.LogRecorder
	// The S3 store restores read from (bucket "restores"), and an etcd member whose
	// snapshots they restore.
	store  *backuptest.S3
	member *backuptest.Server
	// loopback maps a cluster (namespace/name) to members a test runs as local etcd
	// processes; every other cluster is addressed by cluster DNS, which nothing answers here.
	loopback sync.Map
)

// testOperatorImage is the image the managers say they run.
const testOperatorImage = "registry.example/quintet/etcd-cluster:test"

// testManagerNamespace is where the managers say they run: members' policies let them in.
const testManagerNamespace = "etcd-cluster-system"

// fieldOwners are the field managers of the two managers, as cmd/main.go names them.
var fieldOwners = map[bool]string{false: "etcd-cluster", true: "etcd-cluster-clusterwide"}

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	var err error
	env, err = testenv.Start(testenv.Options{
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "..", "config", "crd", "bases")},
		AddToScheme:       []func(*runtime.Scheme) error{v1beta2.AddToScheme},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { must(env.Stop()) }()
	var stopServers func()
	if store, member, stopServers, err = backuptest.StartAll("restores"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stopServers()

	ctx, cancel := context.WithCancel(context.Background())
	var running []func() error
	defer func() {
		cancel()
		for _, wait := range running {
			must(wait())
		}
	}()
	for _, clusterWide := range []bool{false, true} {
		mgr, err := env.NewManager(testenv.ManagerOptions{Customize: func(o *ctrl.Options) {
			CacheOptions(o)
			jobs.CacheOptions(o)
			o.Controller.MaxConcurrentReconciles = 2
		}, FieldOwner: fieldOwners[clusterWide], EventSource: "etcd-test"})
		must(err)
		r := &Reconciler{Client: mgr.Writes, APIReader: mgr.GetAPIReader(), Recorder: mgr.Events, ClusterWide: clusterWide,
			Addresses: testAddresses, OperatorImage: testOperatorImage, ManagerNamespace: testManagerNamespace,
			S3:             loopbackStore, // the test store, on loopback, as an administrator lists a store inside the cluster
			ClusterIssuers: []string{testClusterIssuer}}
		must(r.SetupWithManager(mgr))
		if !clusterWide {
			reconciler, cached, writes, events, logs = r, mgr.GetCache(), mgr.Writes, mgr.Events, mgr.Logs
		}
		running = append(running, mgr.Run(ctx))
	}
	return m.Run()
}

// testClusterIssuer is the one ClusterIssuer the tests' operator lets clusters name.
const testClusterIssuer = "shared-ca"

// loopbackStore lets restores reach the test store on loopback.
var loopbackStore = backup.Reach{Internal: backup.Allowlist{Nets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}

// testAddresses reaches the members of the clusters in loopback on 127.0.0.1.
func testAddresses(c *v1beta2.EtcdCluster) membership.Addresses {
	if a, ok := loopback.Load(client.ObjectKeyFromObject(c)); ok {
		return a.(membership.Addresses)
	}
	return DNSAddresses(c)
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
