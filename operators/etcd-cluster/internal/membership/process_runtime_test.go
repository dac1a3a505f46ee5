package membership

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quintet-operators/quintet/shared/testenv"
)

// processRuntime runs each member as a real etcd process on loopback: the Runtime of the
// integration tests, standing in for the StatefulSet.
type processRuntime struct {
	t     *testing.T
	etcd  string
	dir   string
	mu    sync.Mutex
	procs map[int]*exec.Cmd
	ports map[int][2]int // client, peer
	lost  map[int]bool
	n     int // workloads: ordinals 0..n-1
}

func newProcessRuntime(t *testing.T) *processRuntime {
	assets, err := testenv.AssetsDir(".")
	if err != nil {
		t.Fatal(err)
	}
	r := &processRuntime{t: t, etcd: filepath.Join(assets, "etcd"), dir: t.TempDir(),
		procs: map[int]*exec.Cmd{}, ports: map[int][2]int{}, lost: map[int]bool{}}
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		for o := range r.procs {
			r.kill(o)
		}
	})
	return r
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

func (r *processRuntime) portsOf(ordinal int) [2]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.ports[ordinal]
	if !ok {
		p = [2]int{freePort(r.t), freePort(r.t)}
		r.ports[ordinal] = p
	}
	return p
}

// Addresses.
func (r *processRuntime) Name(ordinal int) string { return fmt.Sprintf("member-%d", ordinal) }
func (r *processRuntime) ClientURL(ordinal int) string {
	return fmt.Sprintf("http://127.0.0.1:%d", r.portsOf(ordinal)[0])
}
func (r *processRuntime) PeerURL(ordinal int) string {
	return fmt.Sprintf("http://127.0.0.1:%d", r.portsOf(ordinal)[1])
}

func (r *processRuntime) dataDir(ordinal int) string {
	return filepath.Join(r.dir, r.Name(ordinal))
}

// Runtime.
func (r *processRuntime) Workloads(context.Context) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n, nil
}

func (r *processRuntime) Start(_ context.Context, ordinal int, initialCluster, state string) error {
	if err := r.run(ordinal, initialCluster, state); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n = max(r.n, ordinal+1)
	return nil
}

func (r *processRuntime) run(ordinal int, initialCluster, state string) error {
	args := []string{
		"--name=" + r.Name(ordinal), "--data-dir=" + r.dataDir(ordinal),
		"--listen-client-urls=" + r.ClientURL(ordinal), "--advertise-client-urls=" + r.ClientURL(ordinal),
		"--listen-peer-urls=" + r.PeerURL(ordinal), "--initial-advertise-peer-urls=" + r.PeerURL(ordinal),
		"--initial-cluster=" + initialCluster, "--initial-cluster-state=" + state,
		"--initial-cluster-token=membership-test", "--log-level=error", "--unsafe-no-fsync",
	}
	logf, err := os.Create(filepath.Join(r.dir, fmt.Sprintf("%s-%d.log", r.Name(ordinal), time.Now().UnixNano())))
	if err != nil {
		return err
	}
	cmd := exec.Command(r.etcd, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	r.mu.Lock()
	r.procs[ordinal] = cmd
	r.mu.Unlock()
	return nil
}

func (r *processRuntime) Stop(_ context.Context, ordinal int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kill(ordinal)
	if ordinal == r.n-1 {
		r.n--
	}
	return os.RemoveAll(r.dataDir(ordinal))
}

func (r *processRuntime) Wipe(_ context.Context, ordinal int, initialCluster string) error {
	r.mu.Lock()
	r.kill(ordinal)
	delete(r.lost, ordinal)
	r.mu.Unlock()
	if err := os.RemoveAll(r.dataDir(ordinal)); err != nil {
		return err
	}
	return r.run(ordinal, initialCluster, "existing")
}

func (r *processRuntime) Lost(_ context.Context, ordinal int) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lost[ordinal], nil
}

// loseMember kills a member and deletes its data, as when a node and its disk are gone.
func (r *processRuntime) loseMember(ordinal int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kill(ordinal)
	r.lost[ordinal] = true
	if err := os.RemoveAll(r.dataDir(ordinal)); err != nil {
		r.t.Fatal(err)
	}
}

// kill ends a member's process; r.mu is held.
func (r *processRuntime) kill(ordinal int) {
	if cmd, ok := r.procs[ordinal]; ok {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		delete(r.procs, ordinal)
	}
}
