package etcdcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// One API server for the package, with two operators against it, as the CoreOS operator
// is deployed: one for its namespaces, and one started with --cluster-wide.
var env *testenv.Env

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
		mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
		must(err)
		r := &Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("etcd-test"), ClusterWide: clusterWide}
		must(r.SetupWithManager(mgr))
		go func() { must(mgr.Start(ctx)) }()
	}
	return m.Run()
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
