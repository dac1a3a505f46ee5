package pods

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFailure(t *testing.T) {
	pod := func(statuses ...corev1.ContainerStatus) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{ContainerStatuses: statuses}}
	}
	waiting := func(reason, message string) corev1.ContainerStatus {
		return corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}
	}
	crashed := waiting("CrashLoopBackOff", "back-off 40s restarting failed container")
	crashed.RestartCount = 3
	crashed.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 2}
	refused := waiting("CrashLoopBackOff", "")
	refused.RestartCount = 1
	refused.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1,
		Message: "starting\nentrypoint: MINIO_ROOT_PASSWORD must be at least 8 characters\n"}
	running := corev1.ContainerStatus{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"running", pod(running), ""},
		{"starting", pod(waiting("ContainerCreating", "")), ""},
		{"no status yet", pod(), ""},
		{"a crash loop, with its exit code", pod(running, crashed), "pod p: CrashLoopBackOff (last exit code 2 after 3 restarts)"},
		{"a crash loop, with the last line it logged", pod(refused),
			"pod p: CrashLoopBackOff (last exit code 1 after 1 restarts): entrypoint: MINIO_ROOT_PASSWORD must be at least 8 characters"},
		{"an image pull, with the kubelet's message", pod(waiting("ImagePullBackOff", `Back-off pulling image "x:1"`)), `pod p: ImagePullBackOff: Back-off pulling image "x:1"`},
		{"a missing Secret", pod(waiting("CreateContainerConfigError", `secret "s" not found`)), `pod p: CreateContainerConfigError: secret "s" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Failure(tt.pod); got != tt.want {
				t.Errorf("Failure() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFailureSummary(t *testing.T) {
	for failures, want := range map[int]string{
		1: "a0",
		3: "a0; a1; a2",
		5: "a0; a1; a2; and 2 more",
	} {
		list := make([]string, failures)
		for i := range list {
			list[i] = fmt.Sprintf("a%d", i)
		}
		if got := FailureSummary(list); got != want {
			t.Errorf("FailureSummary(%d failures) = %q, want %q", failures, got, want)
		}
	}
}
