package minimart

import (
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/quintet-operators/quintet/operators/minimart"
	"github.com/quintet-operators/quintet/operators/minimart/api/v1alpha1"
	"github.com/quintet-operators/quintet/operators/minimart/internal/release"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// testMaxHistory is small so that the cap shows after a few upgrades.
const testMaxHistory = 3

// One API server for the package, with the Minimart controller running against it. Helm's
// requests (its kube client and release storage) are counted apart from the manager
// client's writes.
var (
	env        *testenv.Env
	reconciler *Reconciler
	writes     *testenv.WriteCounter
	events     *testenv.EventCounter
	logs       *testenv.LogRecorder
	helmWrites atomic.Int64
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{
		CRDDirectoryPaths: []string{filepath.Join("..", "..", "..", "config", "crd", "bases")},
		AddToScheme:       []func(*runtime.Scheme) error{v1alpha1.AddToScheme},
	}, testenv.ManagerOptions{EventSource: "minimart-test", Customize: func(o *ctrl.Options) {
		CacheOptions(o)
		o.Controller.MaxConcurrentReconciles = 4
	}}, func(e *testenv.Env, mgr *testenv.Manager) error {
		env, writes, events, logs = e, mgr.Writes, mgr.Events, mgr.Logs
		_, chart, err := minimart.WatchFor(v1alpha1.GroupVersion.WithKind("Minimart"))
		if err != nil {
			return err
		}
		config := rest.CopyConfig(e.Config)
		config.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countWrites{rt} })
		releases, err := release.NewClient(config, mgr.GetRESTMapper(), chart, testMaxHistory, ctrl.Log)
		if err != nil {
			return err
		}
		reconciler = &Reconciler{Client: writes, Releases: releases, Recorder: events}
		return reconciler.SetupWithManager(mgr)
	}))
}

// countWrites counts the requests that are not reads.
type countWrites struct{ next http.RoundTripper }

func (c countWrites) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		helmWrites.Add(1)
	}
	return c.next.RoundTrip(req)
}
