package robustness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// etcdProcess is one real etcd member on loopback, from the etcd the repository builds
// (KUBEBUILDER_ASSETS, as envtest finds it).
type etcdProcess struct {
	t                  *testing.T
	bin, dir           string
	clientURL, peerURL string
	cmd                *exec.Cmd
}

func startEtcd(t *testing.T) *etcdProcess {
	t.Helper()
	bin := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "etcd")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("etcd not found (%v): run `make tools` at the repository root, or set KUBEBUILDER_ASSETS", err)
	}
	ports := freePorts(t, 2)
	e := &etcdProcess{t: t, bin: bin, dir: t.TempDir(),
		clientURL: fmt.Sprintf("http://127.0.0.1:%d", ports[0]), peerURL: fmt.Sprintf("http://127.0.0.1:%d", ports[1])}
	e.start()
	t.Cleanup(e.kill)
	return e
}

func (e *etcdProcess) start() {
	e.cmd = exec.Command(e.bin, "--name=r", "--data-dir="+e.dir, //nolint:gosec // the repository's own etcd
		"--listen-client-urls="+e.clientURL, "--advertise-client-urls="+e.clientURL,
		"--listen-peer-urls="+e.peerURL, "--initial-advertise-peer-urls="+e.peerURL, "--initial-cluster=r="+e.peerURL,
		"--log-level=error")
	e.cmd.Stdout, e.cmd.Stderr = os.Stderr, os.Stderr
	if err := e.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
}

// kill ends the process with SIGKILL: what it acknowledged is on disk, nothing else is saved.
func (e *etcdProcess) kill() {
	if e.cmd != nil && e.cmd.Process != nil {
		_ = e.cmd.Process.Signal(syscall.SIGKILL)
		_ = e.cmd.Wait()
	}
}

// freePorts finds n loopback ports below the kernel's ephemeral range that nothing listens
// on: a port picked with :0 and closed could be taken by a client connection before etcd binds it.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for len(ports) < n {
		p := 20000 + rand.IntN(10000) //nolint:gosec // a port, not a secret
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		_ = l.Close()
		ports = append(ports, p)
	}
	return ports
}

// TestTrafficThroughAnEtcdKilledAndRestartedIsLinearizableAndLosesNothing runs three clients
// against a real etcd member, kills it with SIGKILL mid-traffic and starts it again on its
// data: the history must be linearizable and every acknowledged write still there.
func TestTrafficThroughAnEtcdKilledAndRestartedIsLinearizableAndLosesNothing(t *testing.T) {
	e := startEtcd(t)
	clients := make([]*clientv3.Client, 0, 3)
	for range 3 {
		c, err := clientv3.New(clientv3.Config{Endpoints: []string{e.clientURL}, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		clients = append(clients, c)
	}
	traffic := Traffic{Clients: clients, Prefix: "/robustness/", Keys: 5, Timeout: time.Second}
	h := NewHistory()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() { traffic.Run(ctx, h); close(done) }()
	time.Sleep(1500 * time.Millisecond)
	e.kill()
	time.Sleep(500 * time.Millisecond)
	e.start()
	<-done

	final := finalState(t, traffic, clients[0])
	ops := h.Ops()
	r := Check(ops, traffic.KeySpace(), final, time.Minute)
	t.Logf("etcd killed and restarted: %s", r)
	if !r.OK() {
		dir := filepath.Join(t.TempDir(), "evidence")
		if err := r.WriteEvidence(dir, ops); err != nil {
			t.Error(err)
		}
		t.Fatalf("%s; lost %v; stale %v; history and visualization in %s", r, r.Lost, r.StaleReads, dir)
	}
	if r.Acknowledged == 0 || r.Unknown+r.Failed == 0 {
		t.Fatalf("the traffic must have run and seen the outage: %s", r)
	}
	if r.LongestWriteGap < 500*time.Millisecond {
		t.Fatalf("writes went on while etcd was down? %s", r)
	}
}

// finalState reads the traffic's keys, retrying while the member comes back.
func finalState(t *testing.T, traffic Traffic, c *clientv3.Client) map[string]string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		state, err := traffic.State(ctx, c)
		cancel()
		if err == nil {
			return state
		}
		if time.Now().After(deadline) {
			t.Fatalf("reading the final state: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
