package etcdcluster

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/jobs"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/restore"
)

// A restore from a PersistentVolumeClaim: members never mount the claim (a ReadWriteOnce
// claim could not follow them). Before the first member starts, a Job mounts the claim
// read-only and that member's own volume, and restores there exactly as the member's init
// container restores from S3 (etcd-snapshot restore-member); the member then starts on its data.

// RestoreJobLabel names, on the Job that restores a cluster's first member from a volume and
// on its pod, the cluster. The members' labels are not on them: nothing that selects members
// selects them.
const RestoreJobLabel = "etcd.database.coreos.com/restore-of"

const (
	restoreJobContainer = "restore"
	restoreClaimVolume  = "snapshot"
	// restoreRetryAfter is how long a failed restore Job stays (its failure in status) before
	// the next try.
	restoreRetryAfter = 30 * time.Second
)

// restoreJobName is the Job that restores c's first member.
func restoreJobName(c *v1beta2.EtcdCluster) string { return jobs.Name(c.Name, "restore") }

// restoreFromClaim restores c's first member from spec.restore's claim in a Job, over
// several passes, and says whether the member's volume holds the data.
func (r *Reconciler) restoreFromClaim(ctx context.Context, c *v1beta2.EtcdCluster, initialCluster string) (bool, error) {
	job := &batchv1.Job{}
	err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: restoreJobName(c)}, job)
	switch {
	case apierrors.IsNotFound(err):
		return false, r.startRestoreJob(ctx, c, initialCluster)
	case err != nil:
		return false, err
	case job.DeletionTimestamp != nil: // a failed try, going away
		return false, nil
	}
	result, finished, err := jobs.ReadResult(ctx, r.reader(), job, restoreJobContainer)
	if err != nil || !finished {
		return false, err
	}
	if err := result.Err(); err != nil {
		if time.Since(job.CreationTimestamp.Time) > restoreRetryAfter {
			if err := r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				return false, err
			}
		}
		return false, fmt.Errorf("restoring %s: %w", c.Spec.Restore.Location(), err)
	}
	return true, nil // the Job stays until its TTL, or the cluster, goes: a pass that sees it again starts the member
}

// startRestoreJob makes the Job that restores c's first member.
func (r *Reconciler) startRestoreJob(ctx context.Context, c *v1beta2.EtcdCluster, initialCluster string) error {
	job := restoreJob(c, r.OperatorImage, initialCluster)
	if err := controllerutil.SetControllerReference(c, job, r.Scheme()); err != nil {
		return err
	}
	if err := r.Create(ctx, job); client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	r.Recorder.Eventf(c, job, corev1.EventTypeNormal, v1beta2.ReasonRestoring, "Restore", "Job %s restores %s into the volume of member %s",
		job.Name, c.Spec.Restore.Location(), podName(c, 0))
	return nil
}

// restoreJob is the Job that restores c's first member from its claim: the member as its
// pod would run it (name, data directory, peer URL, initial cluster, token), the claim
// read-only, the member's volume, where the members may run.
func restoreJob(c *v1beta2.EtcdCluster, image, initialCluster string) *batchv1.Job {
	src := c.Spec.Restore
	m := restore.Member{Name: podName(c, 0), DataDir: dataMount + "/data", PeerURL: DNSAddresses(c).PeerURL(0), InitialCluster: initialCluster,
		InitialClusterState: "new", Token: clusterToken(c), SHA256: src.SHA256, RevisionBump: uint64(src.RevisionBump)} //nolint:gosec // at least 0 (CRD)
	container := jobs.Container(restoreJobContainer, image, "restore-member", append(restore.MemberEnv(m), restore.VolumeEnv(src.PersistentVolumeClaim)...))
	container.VolumeMounts = append(container.VolumeMounts,
		corev1.VolumeMount{Name: volumeName, MountPath: dataMount}, corev1.VolumeMount{Name: restoreClaimVolume, MountPath: restore.ClaimDir, ReadOnly: true})
	volumes := []corev1.Volume{
		{Name: volumeName, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName(c, 0)}}},
		{Name: restoreClaimVolume, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
			ClaimName: src.PersistentVolumeClaim.ClaimName, ReadOnly: true}}},
	}
	job := jobs.New(c.Namespace, restoreJobName(c), map[string]string{RestoreJobLabel: c.Name}, nil, snapshotCheckTimeout, container, volumes)
	jobs.PlaceLikeMembers(&job.Spec.Template.Spec, c.Spec.Pod)
	return job
}
