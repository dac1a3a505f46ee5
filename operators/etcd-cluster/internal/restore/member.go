// Package restore is what the operator and the pods it runs to restore a member agree on:
// the member and where its snapshot is, as environment variables, and the check of a
// snapshot the operator makes before the first member of a restoring cluster starts. The
// restore itself, with etcd's own code, is package datadir, which only etcd-snapshot (the
// pods' binary) links: the manager does not carry etcd's server.
package restore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

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

// The environment of `etcd-snapshot restore-member` besides etcd's own, and where the awsSecret
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

// MemberEnv is m as `etcd-snapshot restore-member` reads it: etcd's own variables and the
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

// VolumeEnv tells `etcd-snapshot restore-member` which file of the claim mounted at ClaimDir to
// restore.
func VolumeEnv(src *v1beta2.PVCBackupSource) []corev1.EnvVar {
	return []corev1.EnvVar{{Name: EnvClaimName, Value: src.ClaimName}, {Name: EnvClaimPath, Value: src.Path}}
}

// S3Env tells `etcd-snapshot restore-member` and `etcd-snapshot verify-backup` which store to read from
// (the key goes in EnvS3Key). The awsSecret is mounted at AWSDir.
func S3Env(src *v1beta2.S3BackupSource) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: EnvS3Path, Value: src.Path},
		{Name: EnvS3Endpoint, Value: src.Endpoint},
		{Name: EnvS3ForcePathStyle, Value: strconv.FormatBool(src.ForcePathStyle)},
	}
}
