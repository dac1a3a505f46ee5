package etcdcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
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
	// loopback maps a cluster (namespace/name) to members a test runs as local etcd
	// processes; every other cluster is addressed by cluster DNS, which nothing answers here.
	loopback sync.Map
)

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

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, clusterWide := range []bool{false, true} {
		var logger logr.Logger
		recorded, logger := testenv.NewLogRecorder()
		opts := ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, Logger: logger}
		CacheOptions(&opts)
		mgr, err := ctrl.NewManager(env.Config, opts)
		must(err)
		counted := testenv.CountWrites(client.WithFieldOwner(mgr.GetClient(), fieldOwners[clusterWide]))
		recorder := testenv.CountEvents(mgr.GetEventRecorder("etcd-test"))
		r := &Reconciler{Client: counted, APIReader: mgr.GetAPIReader(), Recorder: recorder, ClusterWide: clusterWide,
			MaxConcurrentReconciles: 2, Addresses: testAddresses}
		must(r.SetupWithManager(mgr))
		if !clusterWide {
			reconciler, cached, writes, events, logs = r, mgr.GetCache(), counted, recorder, recorded
		}
		go func() { must(mgr.Start(ctx)) }()
	}
	return m.Run()
}

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
