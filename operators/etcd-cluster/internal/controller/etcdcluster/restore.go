package etcdcluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/jobs"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/membership"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/restore"
	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/pods"
)

const (
	restoreContainerName = "restore"
	restoreVolume        = "restore-aws"
	// snapshotCheckTimeout bounds reading a snapshot through before the first member starts.
	snapshotCheckTimeout = 10 * time.Minute
)

// restoreContainer restores the first member's data from spec.restore before etcd starts
// (etcd-snapshot restore-member, in the operator's image); on a member that joins the cluster,
// or restarts on its data, it does nothing. It reads etcd's environment, env, and the
// awsSecret, mounted optional: a member restarting after the Secret is gone still starts.
func restoreContainer(c *v1beta2.EtcdCluster, image string, env []corev1.EnvVar) (corev1.Container, corev1.Volume) {
	src := c.Spec.Restore
	env = append(env[:len(env):len(env)], restore.S3Env(src.S3)...)
	env = append(env,
		fromAnnotation(restore.EnvS3Key, v1beta2.RestoreKeyAnnotation),
		fromAnnotation(restore.EnvSHA256, v1beta2.RestoreSHA256Annotation),
		corev1.EnvVar{Name: restore.EnvRevisionBump, Value: strconv.FormatInt(src.RevisionBump, 10)},
	)
	container := corev1.Container{
		Name:            restoreContainerName,
		Image:           image,
		Command:         []string{jobs.SnapshotBinary, "restore-member"},
		Env:             env,
		VolumeMounts:    []corev1.VolumeMount{{Name: volumeName, MountPath: dataMount}, {Name: restoreVolume, MountPath: restore.AWSDir, ReadOnly: true}},
		SecurityContext: pods.RestrictedContainerSecurityContext(&corev1.SecurityContext{ReadOnlyRootFilesystem: ptr.To(true)}),
	}
	volume := corev1.Volume{Name: restoreVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: src.S3.AWSSecret, Optional: ptr.To(true), DefaultMode: ptr.To[int32](0o440)}}}
	return container, volume
}

// errNoOperatorImage: a restore runs the operator's own image.
var errNoOperatorImage = &backup.Error{Reason: conditions.ReasonReconcileFailed,
	Err: errors.New("the operator does not know its own image, which restores the first member: set OPERATOR_IMAGE on the manager")}

// prepareRestore gets the first member of a cluster with spec.restore ready to start on the
// snapshot, and says whether it may: from S3, once the snapshot is checked and named on
// member's pod (its init container restores it); from a volume, once a Job restored it into
// the member's volume. A snapshot that cannot be used leaves the member behind its gate, its
// volume empty, and the Restored condition says why.
func (r *Reconciler) prepareRestore(ctx context.Context, c *v1beta2.EtcdCluster, member *corev1.Pod, initialCluster string) (bool, error) {
	if r.OperatorImage == "" {
		return false, errNoOperatorImage
	}
	if c.Spec.Restore.BackupStorageType == v1beta2.BackupStorageTypePVC {
		return r.restoreFromClaim(ctx, c, initialCluster)
	}
	key, sum, err := r.checkSnapshot(ctx, c)
	if err != nil {
		return false, err
	}
	metav1.SetMetaDataAnnotation(&member.ObjectMeta, v1beta2.RestoreKeyAnnotation, key)
	metav1.SetMetaDataAnnotation(&member.ObjectMeta, v1beta2.RestoreSHA256Annotation, sum)
	return true, nil
}

// checkSnapshot reads the S3 snapshot spec.restore names through and checks it, before the
// first member starts on it, and returns its key (the path's, or the newest periodic backup
// under it) and its database's SHA-256, which the member restores and checks again.
func (r *Reconciler) checkSnapshot(ctx context.Context, c *v1beta2.EtcdCluster) (key, sum string, err error) {
	src := c.Spec.Restore
	ctx, cancel := context.WithTimeout(ctx, snapshotCheckTimeout)
	defer cancel()
	store, err := backup.OpenStore(ctx, r.reader(), c.Namespace, src.S3, r.S3)
	if err != nil {
		return "", "", err
	}
	bucket, key := backup.SplitPath(src.S3.Path)
	if key, err = backup.Resolve(ctx, store, key); err != nil {
		return "", "", err
	}
	body, err := store.Get(ctx, key)
	if err != nil {
		return "", "", err
	}
	defer func() { _ = body.Close() }()
	sum, size, err := restore.Verify(body, src.SHA256)
	if err != nil {
		return "", "", fmt.Errorf("snapshot %s/%s: %w", bucket, key, err)
	}
	ctrl.LoggerFrom(ctx).Info("Snapshot checked: starting the first member on it", "bucket", bucket, "key", key, "bytes", size, "sha256", sum)
	r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, v1beta2.ReasonRestoring, "Restore",
		"Member 0 restores %s/%s (%d bytes, database SHA-256 %s) and starts", bucket, key, size, sum)
	return key, sum, nil
}

// setRestored sets the Restored condition of a cluster with spec.restore: True for good once
// it serves; until then why it waits.
func setRestored(c *v1beta2.EtcdCluster, oc outcome, available bool) {
	src := c.Spec.Restore
	restoreErr, failed := restoreFailure(oc)
	switch {
	case src == nil:
		meta.RemoveStatusCondition(&c.Status.Conditions, v1beta2.RestoredCondition)
	case meta.IsStatusConditionTrue(c.Status.Conditions, v1beta2.RestoredCondition):
	case available:
		conditions.Set(c, v1beta2.RestoredCondition, metav1.ConditionTrue, v1beta2.ReasonRestored,
			fmt.Sprintf("the cluster started from %s: its first member restored it, the others copy it as they join", src.Location()))
	case failed:
		conditions.Set(c, v1beta2.RestoredCondition, metav1.ConditionFalse, restoreErr.Reason,
			fmt.Sprintf("the first member waits: %v (checked again with back-off)", oc.stepErr))
	default:
		conditions.Set(c, v1beta2.RestoredCondition, metav1.ConditionFalse, v1beta2.ReasonRestoring,
			fmt.Sprintf("the first member restores %s before it starts", src.Location()))
	}
}

// restoreFailure is the error of a first member's start that the snapshot check stopped.
func restoreFailure(oc outcome) (*backup.Error, bool) {
	e, ok := errors.AsType[*backup.Error](oc.stepErr)
	return e, ok && oc.step.Action == membership.ActionRelease && oc.step.New
}
