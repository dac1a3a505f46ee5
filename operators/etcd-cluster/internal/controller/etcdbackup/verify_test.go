package etcdbackup

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/restore"
	"github.com/quintet-operators/quintet/shared/conditions"
)

// verifiedBackup creates a one-shot EtcdBackup of the loopback member to S3 with verify, and
// waits for its verification Job.
func verifiedBackup(t *testing.T, ns string) (*v1beta2.EtcdBackup, *batchv1.Job) {
	t.Helper()
	b := &v1beta2.EtcdBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "verified"}, Spec: v1beta2.EtcdBackupSpec{
		EtcdEndpoints: []string{member.URL}, StorageType: v1beta2.BackupStorageTypeS3,
		S3: store.Source(bucket+"/"+ns+"/etcd.db", awsSecret(t, ns, "")), Verify: true,
	}}
	if err := env.Client.Create(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	return b, awaitJob(t, b)
}

// runVerifyJob runs the verification Job's work (etcd-snapshot verify-backup) here, with its
// environment, reading the object with the store's root credentials instead of the mounted
// awsSecret; want changes the fingerprint it verifies against, if not nil.
func runVerifyJob(t *testing.T, job *batchv1.Job, change func(*v1beta2.KeyspaceFingerprint)) string {
	t.Helper()
	env := map[string]string{}
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	want, err := restore.KeyspaceFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if change != nil {
		change(want)
	}
	open := func(ctx context.Context) (io.ReadCloser, error) { return rootStore().Get(ctx, env[restore.EnvS3Key]) }
	message, err := scratchVerifier(t)(t.Context(), open, env[restore.EnvSHA256], want)
	result := backup.JobResult{Verification: &v1beta2.BackupVerification{Time: metav1.Now(), Message: message}}
	if err != nil {
		result = backup.JobResult{Reason: backup.ReasonOf(err), Message: err.Error()}
	}
	return string(backup.EncodeResult(result))
}

func TestVerifiedBackupCountsOnceItsJobRestoredAndComparedIt(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns := env.NewNamespace(t, "verify")
	b, job := verifiedBackup(t, ns)

	// The backup is stored, but waits for its verification.
	g.Eventually(func(g Gomega) {
		g.Expect(condition(g, b, conditions.ProgressingCondition).Reason).To(Equal(v1beta2.ReasonVerifying))
	}, timeout, tick).Should(Succeed())
	g.Expect(b.Status.Verifying).NotTo(BeNil())
	g.Expect(b.Status.Verifying.Keyspace).NotTo(BeNil(), "the member's keyspace, read with the snapshot")
	g.Expect(b.Status.Verifying.Keyspace.Revision).To(Equal(b.Status.Verifying.EtcdRevision))
	g.Expect(b.Status.LastBackup).To(BeNil(), "not counted before it is verified")
	g.Expect(condition(g, b, conditions.ReadyCondition).Status).To(Equal(metav1.ConditionFalse))

	// The Job: the operator's image, restricted, no token, the awsSecret read-only, a scratch directory.
	g.Expect(job.Annotations[VerifiesAnnotation]).To(Equal(b.Status.Verifying.Path))
	pod := job.Spec.Template.Spec
	g.Expect(pod.Containers[0].Command).To(Equal([]string{"/etcd-snapshot", "verify-backup"}))
	g.Expect(pod.Containers[0].Image).To(Equal(testOperatorImage))
	g.Expect(*pod.AutomountServiceAccountToken).To(BeFalse())
	g.Expect(*pod.Containers[0].SecurityContext.ReadOnlyRootFilesystem).To(BeTrue())
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range pod.Containers[0].VolumeMounts {
		mounts[m.MountPath] = m
	}
	g.Expect(mounts).To(HaveKey(restore.AWSDir))
	g.Expect(mounts[restore.AWSDir].ReadOnly).To(BeTrue())
	g.Expect(mounts).To(HaveKey(backup.JobScratchDir))

	finishJob(t, job, runVerifyJob(t, job, nil), true)
	g.Eventually(func(g Gomega) {
		g.Expect(condition(g, b, conditions.ReadyCondition).Reason).To(Equal(v1beta2.ReasonBackupSucceeded))
	}, timeout, tick).Should(Succeed())
	g.Expect(b.Status.Verifying).To(BeNil())
	g.Expect(b.Status.LastBackup.Verification).NotTo(BeNil())
	g.Expect(b.Status.LastBackup.Verification.Message).To(ContainSubstring("as on the member"))
	g.Expect(condition(g, b, conditions.ReadyCondition).Message).To(ContainSubstring("verified: "))
	g.Expect(events.Emitted(b, v1beta2.ReasonBackupVerified)).To(Equal(1))
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(t.Context(), client.ObjectKeyFromObject(job), &batchv1.Job{}))
	}, timeout, tick).Should(BeTrue(), "the Job read is deleted")
}

func TestABackupThatDiffersFromItsMemberIsDeleted(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns := env.NewNamespace(t, "verify-differs")
	b, job := verifiedBackup(t, ns)
	message := runVerifyJob(t, job, func(k *v1beta2.KeyspaceFingerprint) { k.Keys++ })
	finishJob(t, job, message, false)
	g.Eventually(func(g Gomega) {
		degraded := condition(g, b, conditions.DegradedCondition)
		g.Expect(degraded.Reason).To(Equal(v1beta2.ReasonVerificationFailed))
		g.Expect(degraded.Message).To(ContainSubstring("was deleted"))
	}, timeout, tick).Should(Succeed())
	g.Expect(b.Status.LastBackup).To(BeNil())
	objects, err := rootStore().List(t.Context(), ns+"/")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objects).To(BeEmpty(), "the backup that differs is deleted")
}

func TestAVerificationJobThatNeverComparedDeletesNothing(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns := env.NewNamespace(t, "verify-nojob")
	b, job := verifiedBackup(t, ns)
	finishJob(t, job, "", false) // its deadline passed before it compared
	g.Eventually(func(g Gomega) {
		g.Expect(condition(g, b, conditions.DegradedCondition).Reason).To(Equal(v1beta2.ReasonJobFailed))
	}, timeout, tick).Should(Succeed())
	objects, err := rootStore().List(t.Context(), ns+"/")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objects).To(HaveLen(1), "a backup never compared stays")
}

func TestAVerifiedBackupToAVolumeIsVerifiedInItsJob(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t, "verify-volume")
	b := &v1beta2.EtcdBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "volume"}, Spec: v1beta2.EtcdBackupSpec{
		EtcdEndpoints: []string{member.URL}, StorageType: v1beta2.BackupStorageTypePVC, Verify: true,
		PersistentVolumeClaim: &v1beta2.PVCBackupSource{ClaimName: "backups", Path: "etcd/volume.db"},
	}}
	g.Expect(env.Client.Create(t.Context(), b)).To(Succeed())
	job := awaitJob(t, b)
	pod := job.Spec.Template.Spec
	g.Expect(pod.Containers[0].Env).To(ContainElement(corev1.EnvVar{Name: backup.EnvJobVerify, Value: "true"}))
	dir := t.TempDir()
	finishJob(t, job, runJob(t, job, dir), true)
	g.Eventually(func(g Gomega) {
		g.Expect(condition(g, b, conditions.ReadyCondition).Reason).To(Equal(v1beta2.ReasonBackupSucceeded))
	}, timeout, tick).Should(Succeed())
	g.Expect(b.Status.LastBackup.Verification).NotTo(BeNil())
	g.Expect(b.Status.LastBackup.Keyspace).NotTo(BeNil())
	g.Expect(b.Status.LastBackup.Verification.Message).To(ContainSubstring("as on the member"))
	_, err := os.Stat(filepath.Join(dir, "etcd", "volume.db"))
	g.Expect(err).NotTo(HaveOccurred())
}
