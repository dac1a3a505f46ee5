package etcdbackup

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"go.uber.org/zap"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/datadir"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/jobs/jobstest"
	"github.com/quintet-operators/quintet/shared/conditions"
)

const (
	timeout = 30 * time.Second
	tick    = 100 * time.Millisecond
)

// volumeBackup creates an EtcdBackup of endpoints to the claim "backups" at path.
func volumeBackup(t *testing.T, ns, name string, endpoints []string, policy *v1beta2.BackupPolicy) *v1beta2.EtcdBackup {
	t.Helper()
	b := &v1beta2.EtcdBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1beta2.EtcdBackupSpec{
		EtcdEndpoints: endpoints, StorageType: v1beta2.BackupStorageTypePVC,
		PersistentVolumeClaim: &v1beta2.PVCBackupSource{ClaimName: "backups", Path: "etcd/" + name + ".db"}, BackupPolicy: policy,
	}}
	if err := env.Client.Create(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	return b
}

// awaitJob waits for b's backup Job.
func awaitJob(t *testing.T, b *v1beta2.EtcdBackup) *batchv1.Job {
	t.Helper()
	jobs := &batchv1.JobList{}
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(env.Client.List(t.Context(), jobs, client.InNamespace(b.Namespace), client.MatchingLabels{BackupLabel: b.Name})).To(Succeed())
		g.Expect(jobs.Items).To(HaveLen(1))
	}, timeout, tick).Should(Succeed())
	return &jobs.Items[0]
}

// finishJob ends job as its pod would, with message.
func finishJob(t *testing.T, job *batchv1.Job, message string, succeeded bool) {
	t.Helper()
	jobstest.Finish(t, env.Client, job, message, succeeded)
}

// runJob runs the Job's own work (etcd-snapshot backup-to-volume) here, on a folder standing in for
// the claim, with the Job's environment.
func runJob(t *testing.T, job *batchv1.Job, dir string) string {
	t.Helper()
	env := map[string]string{}
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	return string(backup.EncodeResult(backup.RunJob(t.Context(), func(k string) string { return env[k] }, dir, filepath.Join(dir, "no-tls"), time.Now(),
		scratchVerifier(t))))
}

// scratchVerifier verifies backups as the Jobs do (datadir.VerifyBackup), in a directory of
// the test's.
func scratchVerifier(t *testing.T) backup.Verifier {
	dir := t.TempDir()
	return func(ctx context.Context, open func(context.Context) (io.ReadCloser, error), sha256 string, want *v1beta2.KeyspaceFingerprint) (string, error) {
		return datadir.VerifyBackup(ctx, zap.NewNop(), dir, open, sha256, want)
	}
}

func TestBackupToAVolumeRunsInARestrictedJobAndRecordsItsResult(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t, "backup-test")
	b := volumeBackup(t, ns, "volume", []string{member.URL}, nil)
	job := awaitJob(t, b)
	g.Expect(metav1.IsControlledBy(job, b)).To(BeTrue())
	g.Expect(*job.Spec.BackoffLimit).To(BeZero(), "one try: the manager retries with its back-off")
	pod := job.Spec.Template.Spec
	g.Expect(pod.Containers[0].Image).To(Equal(testOperatorImage))
	g.Expect(pod.Containers[0].Command).To(Equal([]string{"/etcd-snapshot", "backup-to-volume"}))
	g.Expect(*pod.AutomountServiceAccountToken).To(BeFalse())
	g.Expect(*pod.SecurityContext.RunAsNonRoot).To(BeTrue())
	g.Expect(*pod.Containers[0].SecurityContext.ReadOnlyRootFilesystem).To(BeTrue())
	g.Expect(pod.Volumes[0].PersistentVolumeClaim.ClaimName).To(Equal("backups"))
	g.Expect(conditions.Get(b, conditions.ProgressingCondition)).To(BeNil(), "b as created")
	g.Eventually(func(g Gomega) {
		g.Expect(condition(g, b, conditions.ProgressingCondition).Reason).To(Equal(v1beta2.ReasonBackingUp))
	}, timeout, tick).Should(Succeed())

	dir := t.TempDir()
	finishJob(t, job, runJob(t, job, dir), true)
	g.Eventually(func(g Gomega) {
		g.Expect(condition(g, b, conditions.ReadyCondition).Reason).To(Equal(v1beta2.ReasonBackupSucceeded))
	}, timeout, tick).Should(Succeed())
	g.Expect(b.Status.LastBackup.Path).To(Equal("backups/etcd/volume.db"))
	stored, err := os.ReadFile(filepath.Join(dir, "etcd", "volume.db"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(int64(len(stored))).To(Equal(b.Status.LastBackup.Size))
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKeyFromObject(job), &batchv1.Job{}))
	}, timeout, tick).Should(BeTrue(), "the Job read is deleted")
	g.Consistently(func(g Gomega) {
		jobs := &batchv1.JobList{}
		g.Expect(env.Client.List(context.Background(), jobs, client.InNamespace(ns))).To(Succeed())
		g.Expect(jobs.Items).To(BeEmpty(), "a one-shot backup makes one Job")
	}, 2*time.Second, tick).Should(Succeed())
}

func TestBackupToAVolumeReportsTheJobsFailure(t *testing.T) {
	ns := env.NewNamespace(t, "backup-test")
	for _, tt := range []struct {
		name, reason, message string
		run                   bool // run the Job's work; else it never started
	}{
		{"unreachable", v1beta2.ReasonClusterUnreachable, "127.0.0.1:1", true},
		{"deadline", v1beta2.ReasonJobFailed, "active longer than specified deadline", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			b := volumeBackup(t, ns, tt.name, []string{"http://127.0.0.1:1"}, nil)
			job := awaitJob(t, b)
			message := ""
			if tt.run {
				message = runJob(t, job, t.TempDir())
			}
			finishJob(t, job, message, false)
			g.Eventually(func(g Gomega) {
				degraded := condition(g, b, conditions.DegradedCondition)
				g.Expect(degraded.Reason).To(Equal(tt.reason))
				g.Expect(degraded.Message).To(ContainSubstring(tt.message))
			}, timeout, tick).Should(Succeed())
			g.Expect(b.Status.LastFailure).NotTo(BeNil())
			g.Expect(strings.Contains(b.Status.Reason, tt.message)).To(BeTrue(), b.Status.Reason)
			g.Expect(metricValues(g, "quintet_etcd_backup_failures_total", b)).To(Equal([]float64{1}), "the Job's failure counts once")
		})
	}
}
