package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
)

// terminationLog is where a container's termination message is read from (the pod's
// terminationMessagePath default).
const terminationLog = "/dev/termination-log"

// backupToVolume is `manager backup-to-volume`: the Job of an EtcdBackup to a
// PersistentVolumeClaim. Its result is its termination message, which the manager reads.
func backupToVolume() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	result := backup.EncodeResult(backup.RunJob(ctx, os.Getenv, backup.JobVolumeDir, backup.JobTLSDir, time.Now()))
	fmt.Println(string(result))
	if err := os.WriteFile(terminationLog, result, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if r, _ := backup.DecodeResult(string(result)); r.Record == nil {
		return 1
	}
	return 0
}
