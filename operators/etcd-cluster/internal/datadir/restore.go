// Package datadir writes a member's data directory from a snapshot with etcd's own restore
// code (etcdutl), and proves a backup by doing so into a scratch etcd it starts. It is what
// etcd-snapshot, the binary of the pods the operator runs, does; the manager does not link it
// (it carries etcd's server).
package datadir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"

	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/restore"
)

// Restore writes m's data directory from the snapshot open gives, and reports whether it
// did: a member that joins an existing cluster (it copies the leader's data), or whose data
// directory already holds a member (a restart), is left as it is. The snapshot is copied
// next to the data directory, checked, restored into a directory beside it, and renamed into
// place last: an interrupted restore leaves no data directory, and the next try starts over.
func Restore(ctx context.Context, lg *zap.Logger, m restore.Member, open restore.Opener) (bool, error) {
	if m.InitialClusterState != "new" {
		lg.Info("not restoring: the member joins an existing cluster", zap.String("state", m.InitialClusterState))
		return false, nil
	}
	if _, err := os.Stat(filepath.Join(m.DataDir, "member")); err == nil {
		lg.Info("not restoring: the data directory holds a member", zap.String("dataDir", m.DataDir))
		return false, nil
	}
	work := m.DataDir + ".restore"
	if err := os.RemoveAll(work); err != nil {
		return false, err
	}
	if err := os.MkdirAll(work, 0o700); err != nil {
		return false, err
	}
	file := filepath.Join(work, "snapshot.db")
	sum, size, err := download(ctx, open, file, m.SHA256)
	if err != nil {
		return false, err
	}
	lg.Info("snapshot downloaded and checked", zap.Int64("bytes", size), zap.String("sha256", sum))
	out := filepath.Join(work, "data")
	err = snapshot.NewV3(lg).Restore(snapshot.RestoreConfig{
		SnapshotPath: file, Name: m.Name, OutputDataDir: out, PeerURLs: []string{m.PeerURL},
		InitialCluster: m.InitialCluster, InitialClusterToken: m.Token,
		RevisionBump: m.RevisionBump, MarkCompacted: m.RevisionBump > 0,
	})
	if err != nil {
		return false, fmt.Errorf("etcdutl snapshot restore: %w", err)
	}
	// The data directory may exist empty (the volume's, or a previous try's mount point).
	if err := os.RemoveAll(m.DataDir); err != nil {
		return false, err
	}
	if err := os.Rename(out, m.DataDir); err != nil {
		return false, err
	}
	return true, os.RemoveAll(work)
}

// download copies the snapshot to file, checking it on the way.
func download(ctx context.Context, open restore.Opener, file, want string) (string, int64, error) {
	body, err := open(ctx)
	if err != nil {
		return "", 0, err
	}
	defer func() { _ = body.Close() }()
	f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600) //nolint:gosec // beside the member's data directory
	if err != nil {
		return "", 0, err
	}
	sum, size, err := restore.Verify(io.TeeReader(body, f), want)
	if err != nil {
		return "", size, errors.Join(err, f.Close())
	}
	if err := f.Sync(); err != nil {
		return "", size, errors.Join(err, f.Close())
	}
	return sum, size, f.Close()
}
