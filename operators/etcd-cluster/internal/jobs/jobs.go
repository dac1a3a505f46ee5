// Package jobs builds the operator's one-shot Jobs (backups to volumes, verifications, the
// restore of a first member from a volume) and reads their results: each runs a command of
// etcd-snapshot, in the manager's own image, restricted, without API access, once, and reports a
// backup.JobResult as its container's termination message.
package jobs

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/shared/labelled"
	"github.com/quintet-operators/quintet/shared/pods"
)

// ManagedByLabel (with ManagedBy) is on every Job the operator makes, and its pods.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "quintet-etcd-cluster"
)

// CacheOptions narrows the manager's cache of Jobs to the operator's own.
var CacheOptions = labelled.CacheOnly(labels.SelectorFromSet(labels.Set{ManagedByLabel: ManagedBy}), &batchv1.Job{})

// SnapshotBinary is where the operator's image has etcd-snapshot (cmd/etcd-snapshot, beside
// /manager): the binary of the pods the operator runs to back up, verify and restore, with
// etcd's own restore and server code, which the manager does not link.
const SnapshotBinary = "/etcd-snapshot"

const (
	uid           = 65532
	scratchVolume = "scratch"
)

// Container runs `etcd-snapshot <command>` of image, restricted, read-only but for its scratch
// directory (backup.JobScratchDir, an emptyDir: where a backup is restored to be verified).
func Container(name, image, command string, env []corev1.EnvVar) corev1.Container {
	return corev1.Container{
		Name: name, Image: image, Command: []string{SnapshotBinary, command}, Env: env,
		VolumeMounts:             []corev1.VolumeMount{{Name: scratchVolume, MountPath: backup.JobScratchDir}},
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		SecurityContext:          pods.RestrictedContainerSecurityContext(&corev1.SecurityContext{ReadOnlyRootFilesystem: ptr.To(true)}),
	}
}

// Name is a Job's name: base, shortened so that with "-" and suffix it stays a valid label
// value (the Job's pods carry it), 63 characters at most.
func Name(base, suffix string) string {
	if limit := 63 - 1 - len(suffix); len(base) > limit {
		base = strings.TrimRight(base[:limit], "-.")
	}
	return base + "-" + suffix
}

// PlaceLikeMembers schedules a Job's pod where a cluster's members may run: with their
// nodeSelector and tolerations (p is the cluster's pod policy, nil for none).
func PlaceLikeMembers(pod *corev1.PodSpec, p *v1beta2.PodPolicy) {
	if p != nil {
		pod.NodeSelector, pod.Tolerations = p.NodeSelector, p.Tolerations
	}
}

// New is a Job running container once (the manager retries with its own back-off), for at
// most deadline, with no service account token; labels go on the Job and its pod, with
// ManagedByLabel. The manager deletes it once it read its result (its TTL, if the operator
// is gone). Volumes written are the pod's group's (fsGroup).
func New(namespace, name string, podLabels, annotations map[string]string, deadline time.Duration,
	container corev1.Container, volumes []corev1.Volume) *batchv1.Job {
	podLabels[ManagedByLabel] = ManagedBy
	security := pods.RestrictedPodSecurityContext(uid)
	security.FSGroup = ptr.To[int64](uid)
	volumes = append(volumes, corev1.Volume{Name: scratchVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: podLabels, Annotations: annotations},
		Spec: batchv1.JobSpec{
			BackoffLimit:            ptr.To[int32](0),
			ActiveDeadlineSeconds:   ptr.To(int64(deadline.Seconds())),
			TTLSecondsAfterFinished: ptr.To[int32](3600),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					AutomountServiceAccountToken: ptr.To(false),
					SecurityContext:              security,
					Containers:                   []corev1.Container{container},
					Volumes:                      volumes,
				},
			},
		},
	}
}

// ReadResult reads a finished Job's result from its container's termination message; a Job
// that failed without one (its pod never ran, was killed, or ran out of time) is JobFailed.
// It says whether the Job finished.
func ReadResult(ctx context.Context, reader client.Reader, job *batchv1.Job, container string) (backup.JobResult, bool, error) {
	var failed *batchv1.JobCondition
	finished := false
	for i, c := range job.Status.Conditions {
		if c.Status == corev1.ConditionTrue && (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) {
			finished = true
			if c.Type == batchv1.JobFailed {
				failed = &job.Status.Conditions[i]
			}
		}
	}
	if !finished {
		return backup.JobResult{}, false, nil
	}
	podList := &corev1.PodList{}
	if err := reader.List(ctx, podList, client.InNamespace(job.Namespace), client.MatchingLabels{batchv1.JobNameLabel: job.Name}); err != nil {
		return backup.JobResult{}, false, err
	}
	for _, p := range podList.Items {
		for _, s := range p.Status.ContainerStatuses {
			if s.Name == container && s.State.Terminated != nil && s.State.Terminated.Message != "" {
				result, err := backup.DecodeResult(s.State.Terminated.Message)
				if err != nil {
					result = backup.JobResult{Reason: v1beta2.ReasonJobFailed, Message: err.Error()}
				}
				return result, true, nil
			}
		}
	}
	message := "the Job finished without a result"
	if failed != nil {
		message = fmt.Sprintf("Job %s failed (%s): %s", job.Name, failed.Reason, failed.Message)
	}
	return backup.JobResult{Reason: v1beta2.ReasonJobFailed, Message: message}, true, nil
}
