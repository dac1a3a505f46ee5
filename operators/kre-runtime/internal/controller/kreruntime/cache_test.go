package kreruntime

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/quintet-operators/quintet/shared/pods"
)

func TestTrimPodKeepsWhatTheOperatorReadsOfAPodAndNoMore(t *testing.T) {
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("http")}}}
	crashing := corev1.ContainerStatus{Name: "nats", Image: "nats:2", ImageID: "sha256:1", ContainerID: "containerd://1", RestartCount: 4,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: "no route\n"}}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "kre-nats-0", Labels: map[string]string{"app": "kre-nats"}},
		Spec: corev1.PodSpec{NodeName: "node", Containers: []corev1.Container{{Name: "nats", Image: "nats:2", Args: []string{"-js"},
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8222}}, ReadinessProbe: probe}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.7", HostIP: "192.168.0.2", QOSClass: corev1.PodQOSBurstable,
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady"}},
			ContainerStatuses: []corev1.ContainerStatus{crashing}},
	}
	failure := pods.Failure(pod)
	trimPod(pod)

	if got := pods.Failure(pod); got != failure || got == "" {
		t.Errorf("the failure read from the trimmed pod is %q, want %q", got, failure)
	}
	c := pod.Spec.Containers[0]
	if c.Name != "nats" || c.ReadinessProbe != probe || len(c.Ports) != 1 || pod.Status.PodIP != "10.0.0.7" || pod.Status.Phase != corev1.PodRunning {
		t.Errorf("what a readiness ask reads is gone: %+v, %+v", c, pod.Status)
	}
	if c.Image != "" || c.Args != nil || pod.Spec.NodeName != "" {
		t.Errorf("the spec kept what the operator does not read: %+v", pod.Spec)
	}
	cs := pod.Status.ContainerStatuses[0]
	if pod.Status.Conditions != nil || pod.Status.HostIP != "" || pod.Status.QOSClass != "" || cs.Image != "" || cs.ImageID != "" || cs.ContainerID != "" {
		t.Errorf("the status kept what the operator does not read: %+v", pod.Status)
	}
	if pod.Labels["app"] != "kre-nats" {
		t.Errorf("the labels (the watch maps a pod to its Runtime by them) are gone: %v", pod.Labels)
	}
}
