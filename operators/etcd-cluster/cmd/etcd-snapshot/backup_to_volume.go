package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/datadir"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/restore"
)

// terminationLog is where a container's termination message is read from (the pod's
// terminationMessagePath default).
const terminationLog = "/dev/termination-log"

// backupToVolume is `etcd-snapshot backup-to-volume`: the Job of an EtcdBackup to a
// PersistentVolumeClaim, which verifies the backup too when asked.
func backupToVolume() int {
	return runJob(func(ctx context.Context, lg *zap.Logger) backup.JobResult {
		return backup.RunJob(ctx, os.Getenv, backup.JobVolumeDir, backup.JobTLSDir, time.Now(), verifier(lg))
	})
}

// verifyBackup is `etcd-snapshot verify-backup`: the Job that verifies an EtcdBackup's new backup
// in an S3 store. It restores the object the environment names into a scratch etcd and
// compares it with the member's keyspace (restore.Keyspace*).
func verifyBackup() int {
	return runJob(func(ctx context.Context, lg *zap.Logger) backup.JobResult {
		want, err := restore.KeyspaceFromEnv(os.Getenv)
		if err != nil {
			return backup.JobResult{Reason: v1beta2.ReasonJobFailed, Message: err.Error()}
		}
		open := s3Opener(os.Getenv)
		message, err := verifier(lg)(ctx, open, os.Getenv(restore.EnvSHA256), want)
		if err != nil {
			return backup.JobResult{Reason: backup.ReasonOf(err), Message: err.Error()}
		}
		return backup.JobResult{Verification: &v1beta2.BackupVerification{Time: metav1.Now(), Message: message}}
	})
}

// verifier verifies backups in backup.JobScratchDir.
func verifier(lg *zap.Logger) backup.Verifier {
	return func(ctx context.Context, open func(context.Context) (io.ReadCloser, error), sha256 string, want *v1beta2.KeyspaceFingerprint) (string, error) {
		return datadir.VerifyBackup(ctx, lg, backup.JobScratchDir, open, sha256, want)
	}
}

// runJob runs a Job's work and reports its result as the container's termination message,
// which the manager reads; the exit code says whether it succeeded.
func runJob(work func(context.Context, *zap.Logger) backup.JobResult) int {
	lg, err := zap.NewProduction()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	result := work(ctx, lg)
	encoded := backup.EncodeResult(result)
	fmt.Println(string(encoded))
	if err := os.WriteFile(terminationLog, encoded, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if result.Err() != nil {
		return 1
	}
	return 0
}
