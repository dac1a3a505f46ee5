// Package jobstest plays, for envtest (which runs neither), the Job controller and the
// kubelet for the operator's Jobs.
package jobstest

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Finish ends job: a pod of it whose container ended with message (none when empty), and
// the Job's conditions, succeeded or past its deadline.
func Finish(t *testing.T, c client.Client, job *batchv1.Job, message string, succeeded bool) {
	t.Helper()
	ctx := t.Context()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: job.Name + "-x",
		Labels: map[string]string{batchv1.JobNameLabel: job.Name}}, Spec: *job.Spec.Template.Spec.DeepCopy()}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if message != "" {
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: pod.Spec.Containers[0].Name, Image: pod.Spec.Containers[0].Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Message: message}}}}
		if err := c.Status().Update(ctx, pod); err != nil {
			t.Fatal(err)
		}
	}
	now := metav1.Now()
	job.Status.StartTime = &now
	if succeeded {
		job.Status.Succeeded, job.Status.CompletionTime = 1, &now
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	} else {
		const deadline = "Job was active longer than specified deadline"
		job.Status.Failed = 1
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonDeadlineExceeded, Message: deadline, LastTransitionTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonDeadlineExceeded, Message: deadline, LastTransitionTime: now}}
	}
	if err := c.Status().Update(ctx, job); err != nil {
		t.Fatal(err)
	}
}
