package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"go.uber.org/zap"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/datadir"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/restore"
)

// restoreMember is `etcd-snapshot restore-member`: the init container of a restoring cluster's
// first member (from S3), or the Job that restores it before it starts (from a volume). It
// reads etcd's own environment and the restore's (restore.Env*), the awsSecret's files from
// restore.AWSDir or the claim at restore.ClaimDir. Its result is its termination message.
func restoreMember() int {
	return runJob(func(ctx context.Context, lg *zap.Logger) backup.JobResult {
		m, open, err := memberFromEnv(os.Getenv)
		var restored bool
		if err == nil {
			restored, err = datadir.Restore(ctx, lg, m, open)
		}
		switch {
		case err != nil:
			lg.Error("restoring the member's data from the snapshot failed", zap.Error(err))
			return backup.JobResult{Reason: backup.ReasonOf(err), Message: err.Error()}
		case restored:
			return backup.JobResult{Restored: "restored " + m.DataDir + " from the snapshot"}
		}
		return backup.JobResult{Restored: m.DataDir + " left as it was"}
	})
}

// memberFromEnv is the member to restore and its snapshot's opener, from the environment.
func memberFromEnv(getenv func(string) string) (restore.Member, restore.Opener, error) {
	m := restore.Member{
		Name: getenv("ETCD_NAME"), DataDir: getenv("ETCD_DATA_DIR"), PeerURL: getenv("ETCD_INITIAL_ADVERTISE_PEER_URLS"),
		InitialCluster: getenv("ETCD_INITIAL_CLUSTER"), InitialClusterState: getenv("ETCD_INITIAL_CLUSTER_STATE"),
		Token: getenv("ETCD_INITIAL_CLUSTER_TOKEN"), SHA256: getenv(restore.EnvSHA256),
	}
	if bump := getenv(restore.EnvRevisionBump); bump != "" {
		var err error
		if m.RevisionBump, err = strconv.ParseUint(bump, 10, 64); err != nil {
			return m, nil, fmt.Errorf("%s: %w", restore.EnvRevisionBump, err)
		}
	}
	if getenv(restore.EnvClaimPath) != "" {
		return m, volumeOpener(getenv), nil
	}
	return m, s3Opener(getenv), nil
}

// volumeOpener opens the file of the claim mounted at restore.ClaimDir that the environment
// names (restore.EnvClaim*): the path's, or the newest periodic backup under it.
func volumeOpener(getenv func(string) string) restore.Opener {
	folder := backup.Folder{Dir: restore.ClaimDir, Name: getenv(restore.EnvClaimName)}
	return func(ctx context.Context) (io.ReadCloser, error) {
		key, err := backup.Resolve(ctx, folder, getenv(restore.EnvClaimPath))
		if err != nil {
			return nil, err
		}
		return folder.Get(ctx, key)
	}
}

// s3Opener opens the object the environment names (restore.EnvS3*), with the awsSecret's
// files mounted at restore.AWSDir.
func s3Opener(getenv func(string) string) restore.Opener {
	src := &v1beta2.S3BackupSource{Path: getenv(restore.EnvS3Path), Endpoint: getenv(restore.EnvS3Endpoint),
		ForcePathStyle: getenv(restore.EnvS3ForcePathStyle) == "true"}
	return func(ctx context.Context) (io.ReadCloser, error) {
		data := map[string][]byte{}
		for _, k := range []string{backup.CredentialsKey, backup.ConfigKey} {
			if b, err := os.ReadFile(filepath.Join(restore.AWSDir, k)); err == nil { //nolint:gosec // the mounted awsSecret's files
				data[k] = b
			}
		}
		creds, err := backup.CredentialsFrom(data)
		if err != nil {
			return nil, fmt.Errorf("the awsSecret mounted at %s: %w", restore.AWSDir, err)
		}
		return backup.NewS3Store(src, creds, backup.Anywhere).Get(ctx, getenv(restore.EnvS3Key))
	}
}
