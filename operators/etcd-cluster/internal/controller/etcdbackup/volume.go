package etcdbackup

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/certs"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/jobs"
)

// BackupLabel names, on a backup Job and its pod, the EtcdBackup it runs for.
const BackupLabel = v1beta2.BackupLabel

const (
	// jobPoll is how often a running backup Job is looked at, besides its own events.
	jobPoll = 10 * time.Second
	// jobContainer is the name of the backup Job's container.
	jobContainer = "backup"
)

// jobName is the Job of b's backup due at due: a pass that reads b's status before the last
// one was written finds the same Job instead of making a second.
func jobName(b *v1beta2.EtcdBackup, due time.Time) string {
	if due.IsZero() { // the first backup
		return jobs.Name(b.Name, "first")
	}
	return jobs.Name(b.Name, strconv.FormatInt(due.Unix(), 36))
}

// backUpToVolume takes b's backup in a Job that mounts its claim: a pass makes the Job, a
// later one reads its result and records it (deleteRecordedJobs deletes it once b's status
// shows it). It says whether the backup is over.
func (r *Reconciler) backUpToVolume(ctx context.Context, b *v1beta2.EtcdBackup, due, now time.Time) (bool, error) {
	jobList, err := r.jobs(ctx, b)
	if err != nil {
		return false, err
	}
	for i := range jobList {
		if recorded(b, &jobList[i]) {
			continue
		}
		result, finished, err := jobs.ReadResult(ctx, r.APIReader, &jobList[i], jobContainer)
		if err != nil || !finished {
			return false, err
		}
		r.recordJob(ctx, b, result, now)
		return true, nil
	}
	return r.startJob(ctx, b, due, now)
}

// deleteRecordedJobs deletes the Jobs whose result b's status holds: only then, so that a
// pass reading an older status never misses a Job and makes another.
func (r *Reconciler) deleteRecordedJobs(ctx context.Context, b *v1beta2.EtcdBackup) error {
	jobList, err := r.jobs(ctx, b)
	if err != nil {
		return err
	}
	for i := range jobList {
		if recorded(b, &jobList[i]) {
			if err := r.Delete(ctx, &jobList[i], client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	return nil
}

// jobs are b's backup Jobs.
func (r *Reconciler) jobs(ctx context.Context, b *v1beta2.EtcdBackup) ([]batchv1.Job, error) {
	list := &batchv1.JobList{}
	err := r.List(ctx, list, client.InNamespace(b.Namespace), client.MatchingLabels{BackupLabel: b.Name})
	return list.Items, err
}

// recorded says whether b's status holds the result of job: a backup or a failure since it
// was made; for a verification Job, that b verifies no longer the backup it verified.
func recorded(b *v1beta2.EtcdBackup, job *batchv1.Job) bool {
	if path, ok := job.Annotations[VerifiesAnnotation]; ok {
		return b.Status.Verifying == nil || b.Status.Verifying.Path != path
	}
	made := job.CreationTimestamp
	st := b.Status
	return (st.LastBackup != nil && !st.LastBackup.StartTime.Before(&made)) || (st.LastFailure != nil && !st.LastFailure.Time.Before(&made))
}

// recordJob records a Job's result: the backup and what it pruned, or why it failed.
func (r *Reconciler) recordJob(ctx context.Context, b *v1beta2.EtcdBackup, result backup.JobResult, now time.Time) {
	if result.Record == nil {
		r.recordBackup(ctx, b, v1beta2.BackupRecord{}, result.Err(), now)
		return
	}
	r.recordBackup(ctx, b, *result.Record, nil, now)
	var pruneErr error
	if result.PruneError != "" {
		pruneErr = fmt.Errorf("%s", result.PruneError)
	}
	r.recordPruned(ctx, b, backup.Folder{Name: b.Spec.PersistentVolumeClaim.ClaimName}, result.Pruned, pruneErr)
}

// startJob makes the Job of b's next backup; a backup that cannot start fails at once.
func (r *Reconciler) startJob(ctx context.Context, b *v1beta2.EtcdBackup, due, now time.Time) (bool, error) {
	if r.OperatorImage == "" {
		r.recordBackup(ctx, b, v1beta2.BackupRecord{}, &backup.Error{Reason: v1beta2.ReasonJobFailed,
			Err: fmt.Errorf("the operator does not know its own image, which backup Jobs run: set OPERATOR_IMAGE on the manager")}, now)
		return true, nil
	}
	endpoints, tlsSecret, _, err := r.endpoints(ctx, b)
	if err != nil {
		r.recordBackup(ctx, b, v1beta2.BackupRecord{}, err, now)
		return true, nil
	}
	job := backupJob(b, jobName(b, due), r.OperatorImage, endpoints, tlsSecret)
	if err := r.placeLikeMembers(ctx, b, &job.Spec.Template.Spec); err != nil {
		return false, err
	}
	if err := controllerutil.SetControllerReference(b, job, r.Scheme()); err != nil {
		return false, err
	}
	if err := r.Create(ctx, job); apierrors.IsAlreadyExists(err) {
		return false, nil // made by a pass whose Job the cache did not show yet
	} else if err != nil {
		return false, err
	}
	ctrl.LoggerFrom(ctx).Info("Started the backup Job", "job", job.Name, "persistentVolumeClaim", b.Spec.PersistentVolumeClaim.ClaimName)
	r.Recorder.Eventf(b, job, corev1.EventTypeNormal, v1beta2.ReasonBackingUp, "Backup", "Job %s backs up to volume %s",
		job.Name, b.Spec.PersistentVolumeClaim.ClaimName)
	return false, nil
}

// placeLikeMembers schedules the Job of a backup of an EtcdCluster where its members may run:
// with their nodeSelector and tolerations.
func (r *Reconciler) placeLikeMembers(ctx context.Context, b *v1beta2.EtcdBackup, pod *corev1.PodSpec) error {
	if b.Spec.ClusterName == "" {
		return nil
	}
	c := &v1beta2.EtcdCluster{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.ClusterName}, c); err != nil {
		return client.IgnoreNotFound(err)
	}
	jobs.PlaceLikeMembers(pod, c.Spec.Pod)
	return nil
}

// backupJob is the Job that backs b up to its claim (and verifies the backup, with
// spec.verify): the operator's image, with the cluster's client certificate if any.
func backupJob(b *v1beta2.EtcdBackup, name, image string, endpoints []string, tlsSecret string) *batchv1.Job {
	p, src := b.Spec.BackupPolicy, b.Spec.PersistentVolumeClaim
	env := []corev1.EnvVar{
		{Name: backup.EnvJobEndpoints, Value: strings.Join(endpoints, ",")},
		{Name: backup.EnvJobClaim, Value: src.ClaimName},
		{Name: backup.EnvJobKey, Value: src.Path},
		{Name: backup.EnvJobPeriodic, Value: strconv.FormatBool(backup.Periodic(p))},
		{Name: backup.EnvJobTimeout, Value: backup.Timeout(p).String()},
		{Name: backup.EnvJobVerify, Value: strconv.FormatBool(b.Spec.Verify)},
	}
	if p != nil {
		env = append(env, corev1.EnvVar{Name: backup.EnvJobMaxBackups, Value: strconv.Itoa(p.MaxBackups)})
		if p.MaxAge != nil {
			env = append(env, corev1.EnvVar{Name: backup.EnvJobMaxAge, Value: p.MaxAge.Duration.String()})
		}
	}
	container := jobs.Container(jobContainer, image, "backup-to-volume", env)
	container.VolumeMounts = append(container.VolumeMounts, corev1.VolumeMount{Name: "backup", MountPath: backup.JobVolumeDir})
	volumes := []corev1.Volume{{Name: "backup", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: src.ClaimName}}}}
	if tlsSecret != "" {
		container.VolumeMounts = append(container.VolumeMounts, corev1.VolumeMount{Name: "tls", MountPath: backup.JobTLSDir, ReadOnly: true})
		files := []string{certs.ClientLayout.Cert, certs.ClientLayout.Key, certs.ClientLayout.CA}
		items := make([]corev1.KeyToPath, 0, len(files))
		for _, k := range files {
			items = append(items, corev1.KeyToPath{Key: k, Path: k})
		}
		volumes = append(volumes, corev1.Volume{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: tlsSecret, Items: items, DefaultMode: ptr.To[int32](0o440)}}})
	}
	return newJob(b, name, nil, container, volumes)
}

// newJob is one of b's Jobs: bounded by the policy's timeout, labelled with b.
func newJob(b *v1beta2.EtcdBackup, name string, annotations map[string]string, container corev1.Container, volumes []corev1.Volume) *batchv1.Job {
	return jobs.New(b.Namespace, name, map[string]string{BackupLabel: b.Name}, annotations, backup.Timeout(b.Spec.BackupPolicy)+time.Minute, container, volumes)
}
