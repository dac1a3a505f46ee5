package membership

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/quintet-operators/quintet/shared/testenv"
)

// processRunner runs each member as a real etcd process on loopback: the Runner of the
// integration tests, standing in for the StatefulSet. A slot is a pod and its volume: the
// data directory is the volume, the process the container.
type processRunner struct {
	t     *testing.T
	etcd  string
	dir   string
	mu    sync.Mutex
	slots map[int]*slot
	ports map[int][2]int // client, peer
	n     int            // workloads: ordinals 0..n-1
	// args are extra etcd flags by ordinal.
	args map[int][]string
}

// slot is one member's pod and volume.
type slot struct {
	waiting bool   // behind its gate
	dataOf  uint64 // recorded on the volume
	failure string // its container cannot run, for a reason of the spec
	proc    *exec.Cmd
	flags   []string // the flags it was released with, for a restart of its container
}

func newProcessRunner(t *testing.T) *processRunner {
	assets, err := testenv.AssetsDir(".")
	if err != nil {
		t.Fatal(err)
	}
	r := &processRunner{t: t, etcd: filepath.Join(assets, "etcd"), dir: t.TempDir(),
		slots: map[int]*slot{}, ports: map[int][2]int{}, args: map[int][]string{}}
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		for o := range r.slots {
			r.kill(o)
		}
	})
	return r
}

// Members listen on ports below Linux's default ephemeral range (32768-60999), which
// outgoing connections draw from: a port found free with ":0" and closed again until etcd
// binds it could meanwhile be taken by any client connection of the parallel tests, and the
// member would never start. Each test process starts at its own offset and checks each port
// before handing it out.
const (
	firstMemberPort = 20000
	lastMemberPort  = 32767
)

var lastPort atomic.Int32

func init() {
	lastPort.Store(int32(firstMemberPort + os.Getpid()%500*20)) //nolint:gosec // below lastMemberPort
}

func freePort(t *testing.T) int {
	for range lastMemberPort - firstMemberPort {
		p := int(lastPort.Add(1))
		if p > lastMemberPort {
			lastPort.Store(firstMemberPort)
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		_ = l.Close()
		return p
	}
	t.Fatal("no free port below the ephemeral range")
	return 0
}

func (r *processRunner) portsOf(ordinal int) [2]int {
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
func (r *processRunner) Name(ordinal int) string { return fmt.Sprintf("member-%d", ordinal) }
func (r *processRunner) ClientURL(ordinal int) string {
	return fmt.Sprintf("http://127.0.0.1:%d", r.portsOf(ordinal)[0])
}
func (r *processRunner) PeerURL(ordinal int) string {
	return fmt.Sprintf("http://127.0.0.1:%d", r.portsOf(ordinal)[1])
}

func (r *processRunner) dataDir(ordinal int) string {
	return filepath.Join(r.dir, r.Name(ordinal))
}

// Runner.
func (r *processRunner) Workloads(context.Context) ([]Workload, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ws []Workload
	for o := 0; o < r.n || r.slots[o] != nil; o++ {
		s := r.slots[o]
		if s == nil {
			ws = append(ws, Workload{Ordinal: o, Exists: o < r.n, Waiting: true})
			continue
		}
		ws = append(ws, Workload{Ordinal: o, Exists: o < r.n, Waiting: s.waiting, DataOf: s.dataOf, Failure: s.failure})
	}
	return ws, nil
}

func (r *processRunner) Scale(_ context.Context, n int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for o := n; o < r.n; o++ {
		r.kill(o)
		delete(r.slots, o)
		if err := os.RemoveAll(r.dataDir(o)); err != nil {
			return err
		}
	}
	for o := r.n; o < n; o++ {
		if r.slots[o] == nil {
			r.slots[o] = &slot{}
		}
		r.slots[o].waiting = true
	}
	r.n = n
	return nil
}

func (r *processRunner) Release(_ context.Context, ordinal int, initialCluster, state string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.slots[ordinal]
	if s == nil || !s.waiting {
		return fmt.Errorf("member %d is not waiting", ordinal)
	}
	s.waiting = false
	s.flags = append([]string{"--initial-cluster=" + initialCluster, "--initial-cluster-state=" + state}, r.args[ordinal]...)
	return r.run(ordinal)
}

func (r *processRunner) Wipe(_ context.Context, ordinal int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kill(ordinal)
	r.slots[ordinal] = &slot{waiting: true}
	return os.RemoveAll(r.dataDir(ordinal))
}

func (r *processRunner) Restart(_ context.Context, ordinal int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kill(ordinal)
	r.slots[ordinal].waiting, r.slots[ordinal].failure = true, ""
	return nil
}

func (r *processRunner) RecordData(_ context.Context, ordinal int, id uint64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.slots[ordinal].dataOf = id
	return nil
}

// run starts the process of a released slot; r.mu is held.
func (r *processRunner) run(ordinal int) error {
	s := r.slots[ordinal]
	if s.failure != "" {
		return nil // its container cannot start
	}
	args := append([]string{
		"--name=" + r.Name(ordinal), "--data-dir=" + r.dataDir(ordinal),
		"--listen-client-urls=" + r.url(ordinal, 0), "--advertise-client-urls=" + r.url(ordinal, 0),
		"--listen-peer-urls=" + r.url(ordinal, 1), "--initial-advertise-peer-urls=" + r.url(ordinal, 1),
		"--initial-cluster-token=membership-test", "--log-level=error", "--unsafe-no-fsync",
	}, s.flags...)
	logf, err := os.Create(filepath.Join(r.dir, fmt.Sprintf("%s-%d.log", r.Name(ordinal), time.Now().UnixNano())))
	if err != nil {
		return err
	}
	cmd := exec.Command(r.etcd, args...) //nolint:gosec // the workspace's own etcd
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	s.proc = cmd
	return nil
}

// url is an ordinal's client (0) or peer (1) URL; r.mu is held (ports are known by then).
func (r *processRunner) url(ordinal, port int) string {
	return fmt.Sprintf("http://127.0.0.1:%d", r.ports[ordinal][port])
}

// kill ends a member's process; r.mu is held.
func (r *processRunner) kill(ordinal int) {
	if s := r.slots[ordinal]; s != nil && s.proc != nil {
		_ = s.proc.Process.Signal(syscall.SIGKILL)
		_ = s.proc.Wait()
		s.proc = nil
	}
}

// Faults, as a cluster deals them out.

// crash kills a member's process and starts it again, as the kubelet restarts a container.
func (r *processRunner) crash(ordinal int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kill(ordinal)
	if err := r.run(ordinal); err != nil {
		r.t.Fatal(err)
	}
}

// deletePod kills a member: its pod comes back behind its gate, on the same volume.
func (r *processRunner) deletePod(ordinal int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kill(ordinal)
	r.slots[ordinal].waiting = true
}

// loseVolume kills a member and deletes its data: its pod comes back on a new, empty volume.
func (r *processRunner) loseVolume(ordinal int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kill(ordinal)
	r.slots[ordinal] = &slot{waiting: true}
	if err := os.RemoveAll(r.dataDir(ordinal)); err != nil {
		r.t.Fatal(err)
	}
}

// stop kills a member for good and leaves its workload as it is: a node that went away.
func (r *processRunner) stop(ordinal int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kill(ordinal)
}

// fail makes a member's container fail for a reason of its spec, as a bad flag would.
func (r *processRunner) fail(ordinal int, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kill(ordinal)
	r.slots[ordinal].failure = reason
}

// deleteWorkloads kills every member and deletes the workloads, leaving the volumes, as
// deleting the StatefulSet does.
func (r *processRunner) deleteWorkloads() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for o := range r.slots {
		r.kill(o)
		r.slots[o].waiting = true
	}
	r.n = 0
}
