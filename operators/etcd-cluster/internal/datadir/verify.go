package datadir

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/etcd"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/restore"
)

// scratchStartTimeout bounds the scratch etcd's start on a restored database.
const scratchStartTimeout = 2 * time.Minute

// VerifyBackup restores the snapshot open gives, exactly as a restored cluster's first
// member does (Restore: the SHA-256 checked, etcd's own restore code), into dir, starts a
// scratch etcd on it (etcd's server, embedded, on loopback only), and compares its keyspace
// at want's revision with want. It says what it compared. A restore that differs is
// VerificationFailed; any other error means nothing was compared.
func VerifyBackup(ctx context.Context, lg *zap.Logger, dir string, open restore.Opener, sha256 string,
	fingerprint *v1beta2.KeyspaceFingerprint) (string, error) {
	want, err := keyspaceOf(fingerprint)
	if err != nil {
		return "", err
	}
	ports, err := freePorts(2)
	if err != nil {
		return "", err
	}
	peer := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	m := restore.Member{Name: "verify", DataDir: filepath.Join(dir, "data"), PeerURL: peer, InitialCluster: "verify=" + peer,
		InitialClusterState: "new", Token: "verify", SHA256: sha256}
	if err := os.RemoveAll(m.DataDir); err != nil {
		return "", err
	}
	if _, err := Restore(ctx, lg, m, open); err != nil {
		if backup.ReasonOf(err) == v1beta2.ReasonSnapshotCorrupt { // stored, then not whole
			return "", &backup.Error{Reason: v1beta2.ReasonVerificationFailed, Err: err}
		}
		return "", err
	}
	defer func() { _ = os.RemoveAll(m.DataDir) }()
	client := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	got, err := scratchKeyspace(ctx, lg, m, client, want.Revision)
	if err != nil {
		return "", err
	}
	message, err := etcd.Compare(want, got)
	if err != nil {
		return "", &backup.Error{Reason: v1beta2.ReasonVerificationFailed, Err: err}
	}
	return message, nil
}

// scratchKeyspace starts etcd on m's restored data directory, listening on client and m's
// peer URL, and reads its keyspace's fingerprint at revision.
func scratchKeyspace(ctx context.Context, lg *zap.Logger, m restore.Member, client string, revision int64) (etcd.Keyspace, error) {
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir, cfg.InitialCluster, cfg.InitialClusterToken = m.Name, m.DataDir, m.InitialCluster, m.Token
	peerURL, _ := url.Parse(m.PeerURL)
	clientURL, _ := url.Parse(client)
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*peerURL}, []url.URL{*peerURL}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*clientURL}, []url.URL{*clientURL}
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(lg.Named("scratch-etcd").WithOptions(zap.IncreaseLevel(zap.WarnLevel)))
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return etcd.Keyspace{}, fmt.Errorf("starting a scratch etcd on the restored data: %w", err)
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		return etcd.Keyspace{}, fmt.Errorf("the scratch etcd on the restored data: %w", err)
	case <-time.After(scratchStartTimeout):
		return etcd.Keyspace{}, fmt.Errorf("the scratch etcd on the restored data was not ready after %s", scratchStartTimeout)
	case <-ctx.Done():
		return etcd.Keyspace{}, ctx.Err()
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{client}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return etcd.Keyspace{}, err
	}
	defer func() { _ = c.Close() }()
	return etcd.KeyspaceAt(ctx, c, client, revision)
}

// freePorts finds n free TCP ports on loopback.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// keyspaceOf reads a fingerprint status holds.
func keyspaceOf(f *v1beta2.KeyspaceFingerprint) (etcd.Keyspace, error) {
	if f == nil {
		return etcd.Keyspace{}, errors.New("no keyspace fingerprint to verify the backup against")
	}
	h, err := strconv.ParseUint(f.HashKV, 16, 32)
	if err != nil {
		return etcd.Keyspace{}, fmt.Errorf("the keyspace fingerprint's hashKV %q: %w", f.HashKV, err)
	}
	return etcd.Keyspace{Revision: f.Revision, CompactRevision: f.CompactRevision, Keys: f.Keys, Hash: uint32(h)}, nil
}
