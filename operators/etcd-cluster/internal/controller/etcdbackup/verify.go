package etcdbackup

import (
	"context"
	"fmt"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/jobs"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/restore"
)

// A backup to S3 with spec.verify is taken by the manager, then verified by a Job of the
// operator's image (etcd-snapshot verify-backup) that reads it back from the store, restores it
// into a scratch etcd and compares it with the member's keyspace; only then does it count.
// (A backup to a volume is verified by its own Job, in the same pod.)

// VerifiesAnnotation names, on a verification Job, the backup it verifies.
const VerifiesAnnotation = "etcd.database.coreos.com/verifies"

// verifyContainer is the name of the verification Job's container.
const verifyContainer = "verify"

// startVerification holds a backup just taken until its verification Job says it is whole.
func (r *Reconciler) startVerification(ctx context.Context, b *v1beta2.EtcdBackup, record v1beta2.BackupRecord) {
	ctrl.LoggerFrom(ctx).Info("Backed up; verifying", "path", record.Path, "revision", record.EtcdRevision, "bytes", record.Size)
	b.Status.Verifying = &record
	setConditions(b, false)
}

// verifyBackup runs the verification of b's backup under way, over several passes: a pass
// makes the Job, a later one records its result. It says whether the verification is over.
func (r *Reconciler) verifyBackup(ctx context.Context, b *v1beta2.EtcdBackup, now time.Time) (bool, error) {
	v := b.Status.Verifying
	job := &batchv1.Job{}
	err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: verifyJobName(b, v)}, job)
	if apierrors.IsNotFound(err) {
		return false, r.startVerifyJob(ctx, b, v, now)
	} else if err != nil {
		return false, err
	}
	result, finished, err := jobs.ReadResult(ctx, r.APIReader, job, verifyContainer)
	if err != nil || !finished {
		return false, err
	}
	r.recordVerification(ctx, b, *v, result, now)
	return true, nil
}

// recordVerification counts a verified backup (status, Events, retention), or fails it: a
// backup that differs from its member is deleted; one the Job never compared is left.
func (r *Reconciler) recordVerification(ctx context.Context, b *v1beta2.EtcdBackup, record v1beta2.BackupRecord, result backup.JobResult, now time.Time) {
	b.Status.Verifying = nil
	store, storeErr := r.store(ctx, b)
	if result.Verification == nil {
		err := result.Err()
		if backup.ReasonOf(err) == v1beta2.ReasonVerificationFailed && storeErr == nil {
			_, key := backup.SplitPath(record.Path)
			if delErr := store.Delete(ctx, key); delErr != nil {
				err = fmt.Errorf("%w (deleting the backup %s failed: %v)", err, record.Path, delErr)
			} else {
				err = fmt.Errorf("%w (the backup %s was deleted)", err, record.Path)
			}
			err = &backup.Error{Reason: v1beta2.ReasonVerificationFailed, Err: err}
		}
		r.recordBackup(ctx, b, v1beta2.BackupRecord{}, err, now)
		return
	}
	record.Verification = result.Verification
	r.Recorder.Eventf(b, nil, corev1.EventTypeNormal, v1beta2.ReasonBackupVerified, "Verify", "Backup %s restored into a scratch etcd: %s",
		record.Path, record.Verification.Message)
	r.recordBackup(ctx, b, record, nil, now)
	if storeErr == nil {
		r.prune(ctx, b, store, record, now)
	} else {
		r.recordPruned(ctx, b, store, nil, storeErr)
	}
}

// startVerifyJob makes the Job that verifies v; a verification that cannot start fails the
// backup (the object stays: it was never compared).
func (r *Reconciler) startVerifyJob(ctx context.Context, b *v1beta2.EtcdBackup, v *v1beta2.BackupRecord, now time.Time) error {
	if r.OperatorImage == "" || v.Keyspace == nil {
		b.Status.Verifying = nil
		r.recordBackup(ctx, b, v1beta2.BackupRecord{}, &backup.Error{Reason: v1beta2.ReasonJobFailed,
			Err: fmt.Errorf("the backup %s cannot be verified: the operator does not know its own image (set OPERATOR_IMAGE on the manager) "+
				"or the member's keyspace", v.Path)}, now)
		return nil
	}
	job := verifyJob(b, v, r.OperatorImage)
	if err := r.placeLikeMembers(ctx, b, &job.Spec.Template.Spec); err != nil {
		return err
	}
	if err := controllerutil.SetControllerReference(b, job, r.Scheme()); err != nil {
		return err
	}
	if err := r.Create(ctx, job); client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	r.Recorder.Eventf(b, job, corev1.EventTypeNormal, v1beta2.ReasonVerifying, "Verify", "Job %s restores %s into a scratch etcd to compare it with %s",
		job.Name, v.Path, v.Member)
	return nil
}

// verifyJobName is the Job that verifies v: one per backup.
func verifyJobName(b *v1beta2.EtcdBackup, v *v1beta2.BackupRecord) string {
	return jobs.Name(b.Name, "verify-"+strconv.FormatInt(v.StartTime.Unix(), 36))
}

// verifyJob is the Job that verifies v, in b's store, against the keyspace recorded.
func verifyJob(b *v1beta2.EtcdBackup, v *v1beta2.BackupRecord, image string) *batchv1.Job {
	src := b.Spec.S3
	_, key := backup.SplitPath(v.Path)
	env := append(restore.S3Env(src), corev1.EnvVar{Name: restore.EnvS3Key, Value: key}, corev1.EnvVar{Name: restore.EnvSHA256, Value: v.SHA256})
	env = append(env, restore.KeyspaceEnv(v.Keyspace)...)
	container := jobs.Container(verifyContainer, image, "verify-backup", env)
	container.VolumeMounts = append(container.VolumeMounts, corev1.VolumeMount{Name: "aws", MountPath: restore.AWSDir, ReadOnly: true})
	volumes := []corev1.Volume{{Name: "aws", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: src.AWSSecret, DefaultMode: ptr.To[int32](0o440)}}}}
	return newJob(b, verifyJobName(b, v), map[string]string{VerifiesAnnotation: v.Path}, container, volumes)
}
