package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"go.uber.org/zap"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/restore"
)

// restoreMember is `manager restore-member`: the init container of a restoring cluster's
// first member. It reads etcd's own environment and the restore's (restore.Env*), and the
// awsSecret's files from restore.AWSDir.
func restoreMember() int {
	lg, err := zap.NewProduction()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m, open, err := memberFromEnv(os.Getenv)
	if err == nil {
		_, err = restore.Restore(ctx, lg, m, open)
	}
	if err != nil {
		lg.Error("restoring the member's data from the snapshot failed", zap.Error(err))
		return 1
	}
	return 0
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
	src := &v1beta2.S3BackupSource{Path: getenv(restore.EnvS3Path), Endpoint: getenv(restore.EnvS3Endpoint),
		ForcePathStyle: getenv(restore.EnvS3ForcePathStyle) == "true"}
	open := func(ctx context.Context) (io.ReadCloser, error) {
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
		return backup.NewS3Store(src, creds).Get(ctx, getenv(restore.EnvS3Key))
	}
	return m, open, nil
}
