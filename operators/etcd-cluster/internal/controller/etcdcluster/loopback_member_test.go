package etcdcluster

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/etcd"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// loopbackMember is member 0 of a one-member cluster, run as a real etcd process on
// 127.0.0.1 where the StatefulSet's pod would run: envtest runs no pods.
type loopbackMember struct {
	name             string
	client, peerPort int
}

func (a loopbackMember) Name(ordinal int) string { return fmt.Sprintf("%s-%d", a.name, ordinal) }
func (a loopbackMember) ClientURL(int) string    { return fmt.Sprintf("http://127.0.0.1:%d", a.client) }
func (a loopbackMember) PeerURL(int) string      { return fmt.Sprintf("http://127.0.0.1:%d", a.peerPort) }

// runLoopbackMember starts etcd as member 0 of c, registers its addresses for the
// controller (testAddresses) and stops it when the test ends. It returns once the member
// answers.
func runLoopbackMember(t *testing.T, c *v1beta2.EtcdCluster) {
	t.Helper()
	assets, err := testenv.AssetsDir(".")
	if err != nil {
		t.Fatal(err)
	}
	m := loopbackMember{name: c.Name, client: testenv.FreeLoopbackPort(t), peerPort: testenv.FreeLoopbackPort(t)}
	name := m.Name(0)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, filepath.Join(assets, "etcd"), //nolint:gosec // the workspace's own etcd
		"--name", name, "--data-dir", t.TempDir(),
		"--listen-client-urls", m.ClientURL(0), "--advertise-client-urls", m.ClientURL(0),
		"--listen-peer-urls", m.PeerURL(0), "--initial-advertise-peer-urls", m.PeerURL(0),
		"--initial-cluster", name+"="+m.PeerURL(0), "--initial-cluster-state", "new")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := etcd.New(ctx, []string{m.ClientURL(0)})
		if err == nil {
			_, err = c.Status(ctx, m.ClientURL(0))
			_ = c.Close()
		}
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd member %s did not answer: %v", name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	loopback.Store(client.ObjectKeyFromObject(c), m)
	t.Cleanup(func() { loopback.Delete(client.ObjectKeyFromObject(c)) })
}
