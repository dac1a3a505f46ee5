// Package restore starts a member's data from a snapshot: the check the operator makes
// before the first member of a restoring cluster starts, and the restore that member's init
// container runs (manager restore-member) with etcd's own code (etcdutl snapshot restore).
package restore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/etcd"
)

// Verify reads a snapshot to its end and checks it: etcd's SHA-256 at its end, and the one
// the restore asks for, if any. It returns the database's SHA-256 and the snapshot's size;
// a snapshot that fails is SnapshotCorrupt.
func Verify(r io.Reader, want string) (string, int64, error) {
	sum, size, err := etcd.VerifySnapshot(r)
	switch {
	case errors.Is(err, etcd.ErrSnapshotCorrupt):
		return "", size, &backup.Error{Reason: v1beta2.ReasonSnapshotCorrupt, Err: err}
	case err != nil:
		return "", size, err
	case want != "" && sum != want:
		return "", size, &backup.Error{Reason: v1beta2.ReasonSnapshotCorrupt,
			Err: fmt.Errorf("%w: the database's SHA-256 is %s, the restore asks for %s", etcd.ErrSnapshotCorrupt, sum, want)}
	}
	return sum, size, nil
}

// Member is the member to restore, as etcd itself is configured (the same environment).
type Member struct {
	Name           string // ETCD_NAME
	DataDir        string // ETCD_DATA_DIR
	PeerURL        string // ETCD_INITIAL_ADVERTISE_PEER_URLS
	InitialCluster string // ETCD_INITIAL_CLUSTER
	// InitialClusterState is "new" for the first member of a cluster: the only one restored.
	InitialClusterState string // ETCD_INITIAL_CLUSTER_STATE
	Token               string // ETCD_INITIAL_CLUSTER_TOKEN
	// SHA256 the database must have; any when empty.
	SHA256       string
	RevisionBump uint64
}

// Opener opens the snapshot.
type Opener func(context.Context) (io.ReadCloser, error)

// Restore writes m's data directory from the snapshot open gives, and reports whether it
// did: a member that joins an existing cluster (it copies the leader's data), or whose data
// directory already holds a member (a restart), is left as it is. The snapshot is copied
// next to the data directory, checked, restored into a directory beside it, and renamed into
// place last: an interrupted restore leaves no data directory, and the next try starts over.
func Restore(ctx context.Context, lg *zap.Logger, m Member, open Opener) (bool, error) {
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
func download(ctx context.Context, open Opener, file, want string) (string, int64, error) {
	body, err := open(ctx)
	if err != nil {
		return "", 0, err
	}
	defer func() { _ = body.Close() }()
	f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600) //nolint:gosec // beside the member's data directory
	if err != nil {
		return "", 0, err
	}
	sum, size, err := Verify(io.TeeReader(body, f), want)
	if err != nil {
		return "", size, errors.Join(err, f.Close())
	}
	if err := f.Sync(); err != nil {
		return "", size, errors.Join(err, f.Close())
	}
	return sum, size, f.Close()
}

// The environment of `manager restore-member` besides etcd's own, and where the awsSecret
// is mounted.
const (
	EnvS3Path           = "RESTORE_S3_PATH"
	EnvS3Key            = "RESTORE_S3_KEY" // the object the operator checked (the path's, or its newest periodic backup)
	EnvS3Endpoint       = "RESTORE_S3_ENDPOINT"
	EnvS3ForcePathStyle = "RESTORE_S3_FORCE_PATH_STYLE"
	EnvSHA256           = "RESTORE_SHA256"
	EnvRevisionBump     = "RESTORE_REVISION_BUMP"
	AWSDir              = "/etc/etcd-restore/aws"

	// A snapshot on a volume: the claim is mounted read-only at ClaimDir.
	EnvClaimName = "RESTORE_CLAIM_NAME"
	EnvClaimPath = "RESTORE_CLAIM_PATH" // a file, or the prefix of periodic backups (the newest is restored)
	ClaimDir     = "/var/lib/etcd-restore/claim"
)

// MemberEnv is m as `manager restore-member` reads it: etcd's own variables and the
// restore's.
func MemberEnv(m Member) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: "ETCD_NAME", Value: m.Name},
		{Name: "ETCD_DATA_DIR", Value: m.DataDir},
		{Name: "ETCD_INITIAL_ADVERTISE_PEER_URLS", Value: m.PeerURL},
		{Name: "ETCD_INITIAL_CLUSTER", Value: m.InitialCluster},
		{Name: "ETCD_INITIAL_CLUSTER_STATE", Value: m.InitialClusterState},
		{Name: "ETCD_INITIAL_CLUSTER_TOKEN", Value: m.Token},
		{Name: EnvSHA256, Value: m.SHA256},
		{Name: EnvRevisionBump, Value: strconv.FormatUint(m.RevisionBump, 10)},
	}
}

// VolumeEnv tells `manager restore-member` which file of the claim mounted at ClaimDir to
// restore.
func VolumeEnv(src *v1beta2.PVCBackupSource) []corev1.EnvVar {
	return []corev1.EnvVar{{Name: EnvClaimName, Value: src.ClaimName}, {Name: EnvClaimPath, Value: src.Path}}
}

// S3Env tells `manager restore-member` and `manager verify-backup` which store to read from
// (the key goes in EnvS3Key). The awsSecret is mounted at AWSDir.
func S3Env(src *v1beta2.S3BackupSource) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: EnvS3Path, Value: src.Path},
		{Name: EnvS3Endpoint, Value: src.Endpoint},
		{Name: EnvS3ForcePathStyle, Value: strconv.FormatBool(src.ForcePathStyle)},
	}
}
