// Package managertest checks a manager built as an operator's cmd/main.go builds it, against
// a real API server (shared/testenv).
package managertest

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/quintet-operators/quintet/shared/manager"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// workersMetric is controller-runtime's gauge of each controller's workers.
const workersMetric = "controller_runtime_max_concurrent_reconciles"

// ExpectWorkers fails t unless each of an operator's controllers (and no other) runs as many
// workers as --max-concurrent-reconciles says: it starts an API server with the CRDs in
// crdDir and a manager built as cmd/main.go builds it (Workers), with the flag at 3, neither
// controller-runtime's default nor the flag's.
func ExpectWorkers(t testing.TB, crdDir, name string, scheme *runtime.Scheme, setup func(ctrl.Manager) error,
	controllers []string, customize ...func(*ctrl.Options)) {
	t.Helper()
	env, err := testenv.Start(testenv.Options{CRDDirectoryPaths: []string{crdDir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	const n = 3
	workers, err := Workers(env, name, manager.Flags{MaxConcurrentReconciles: n}, scheme, setup, len(controllers), customize...)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for _, c := range controllers {
		want[c] = n
	}
	if !maps.Equal(workers, want) {
		t.Fatalf("workers by controller (%s) = %v, want %v", workersMetric, workers, want)
	}
}

// Workers starts a manager built from flags as an operator's cmd/main.go builds it
// (manager.Options; its metrics and probes off), adds the controllers with setup, and returns
// how many workers each controller runs, as controller-runtime's gauge
// controller_runtime_max_concurrent_reconciles says once it has started `want` controllers.
// It stops the manager before it returns. A test process may call it once: controller names
// and metrics are per process.
func Workers(e *testenv.Env, name string, flags manager.Flags, scheme *runtime.Scheme, setup func(ctrl.Manager) error,
	want int, customize ...func(*ctrl.Options)) (_ map[string]float64, rerr error) {
	flags.MetricsAddr, flags.ProbeAddr, flags.LeaderElect = "0", "0", false
	mgr, err := ctrl.NewManager(e.Config, manager.Options(name, flags, scheme, customize...))
	if err != nil {
		return nil, err
	}
	if err := setup(mgr); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil && rerr == nil {
			rerr = fmt.Errorf("stopping the manager: %w", err)
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		workers, err := gauge(workersMetric)
		switch {
		case err != nil:
			return nil, err
		case len(workers) >= want:
			return workers, nil
		case time.Now().After(deadline):
			return workers, fmt.Errorf("%d of %d controllers started within 30s", len(workers), want)
		}
		select {
		case err := <-done:
			done <- err // for the deferred wait
			return nil, fmt.Errorf("the manager stopped: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// gauge reads a gauge of controller-runtime's registry by its controller label.
func gauge(name string) (map[string]float64, error) {
	families, err := metrics.Registry.Gather()
	if err != nil {
		return nil, err
	}
	values := map[string]float64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" {
					values[l.GetValue()] = m.GetGauge().GetValue()
				}
			}
		}
	}
	return values, nil
}
