package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// ManagerOptions shape a test package's controller manager.
type ManagerOptions struct {
	// Customize changes the manager's options: the operator's cache options, a test informer.
	Customize func(*ctrl.Options)
	// FieldOwner names the writes of the counted client (client.WithFieldOwner), as the
	// operator's cmd/main.go does; the manager's default when empty.
	FieldOwner string
	// EventSource names the Events' reporting controller.
	EventSource string
}

// Manager is a controller manager for one test package, against an Env, with the writes of
// its client, its Events and its log lines counted: give Writes and Events to the
// reconcilers under test, register them, then Run.
type Manager struct {
	ctrl.Manager
	Writes *WriteCounter
	Events *EventCounter
	Logs   *LogRecorder
}

// NewManager makes a manager on e, its metrics server off.
func (e *Env) NewManager(o ManagerOptions) (*Manager, error) {
	logs, logger := NewLogRecorder()
	opts := ctrl.Options{Scheme: e.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, Logger: logger}
	if o.Customize != nil {
		o.Customize(&opts)
	}
	mgr, err := ctrl.NewManager(e.Config, opts)
	if err != nil {
		return nil, err
	}
	c := mgr.GetClient()
	if o.FieldOwner != "" {
		c = client.WithFieldOwner(c, o.FieldOwner)
	}
	return &Manager{Manager: mgr, Writes: CountWrites(c), Events: CountEvents(mgr.GetEventRecorder(o.EventSource)), Logs: logs}, nil
}

// Run starts the manager in the background until ctx ends; the returned function waits for
// it to stop and returns its error.
func (m *Manager) Run(ctx context.Context) (wait func() error) {
	done := make(chan error, 1)
	go func() { done <- m.Start(ctx) }()
	return func() error { return <-done }
}

// RunForTest starts the manager in the background for one test: the returned stop (which the
// test's cleanup calls too, if the test did not) stops it, waits for it, and fails the test
// when it stopped with an error.
func (m *Manager) RunForTest(t testing.TB) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	wait := m.Run(ctx)
	stop = sync.OnceFunc(func() {
		cancel()
		if err := wait(); err != nil {
			t.Errorf("the test's manager stopped: %v", err)
		}
	})
	t.Cleanup(stop)
	return stop
}

// Main runs a test package against one API server (o) and one manager (mo): setup registers
// the reconcilers under test, typically keeping env and the manager's counters in package
// variables. It returns m.Run's exit code, or 1 when the environment cannot start.
func Main(m *testing.M, o Options, mo ManagerOptions, setup func(*Env, *Manager) error) int {
	env, err := Start(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code, err := runWith(m, env, mo, setup)
	if err = errors.Join(err, env.Stop()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return code
}

// MainEnv runs a test package against one API server (o), for packages whose tests build
// their own managers: keep receives the environment before the tests run (typically into a
// package variable). It returns m.Run's exit code, or 1 when the environment cannot start or stop.
func MainEnv(m *testing.M, o Options, keep func(*Env)) int {
	env, err := Start(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	keep(env)
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return code
}

func runWith(m *testing.M, env *Env, mo ManagerOptions, setup func(*Env, *Manager) error) (int, error) {
	mgr, err := env.NewManager(mo)
	if err != nil {
		return 0, err
	}
	if err := setup(env, mgr); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	wait := mgr.Run(ctx)
	code := m.Run()
	cancel()
	return code, wait()
}
