package runtimeversion

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

const (
	// notReadyGrace is how long a running container may take to turn ready (a node subscribing,
	// reaching MongoDB and the bucket) before its pod counts as failing.
	notReadyGrace = 30 * time.Second
	// readinessAskTimeout bounds asking a pod's readiness endpoint why it is not ready.
	readinessAskTimeout = 2 * time.Second
	// maxAnswerLength bounds the answer quoted.
	maxAnswerLength = 300
)

// unreadyPods says why each of a version's pods has run longer than notReadyGrace without
// turning ready, as its readiness endpoint answers (a krt-runner node names what it cannot
// reach: NATS, MongoDB refusing its credentials, the bucket); the kubelet keeps that answer to
// itself. It also returns when to look again for pods still within their grace; 0 for none.
func unreadyPods(ctx context.Context, pods []corev1.Pod, now time.Time) ([]string, time.Duration) {
	var out []string
	var again time.Duration
	for i := range pods {
		pod := &pods[i]
		since, probe := unreadySince(pod)
		if probe == nil {
			continue
		}
		if wait := notReadyGrace - now.Sub(since); wait > 0 {
			again = max(again, wait)
			continue
		}
		out = append(out, fmt.Sprintf("pod %s: not ready after %s: %s", pod.Name, notReadyGrace, askReadiness(ctx, pod, probe)))
	}
	return out, again
}

// unreadySince is when pod's running container with an HTTP readiness probe started, and
// that probe, when it is not ready; nil when the pod is ready, not running, or going.
func unreadySince(pod *corev1.Pod) (time.Time, *corev1.Container) {
	if pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning || pod.Status.PodIP == "" {
		return time.Time{}, nil
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Ready || cs.State.Running == nil {
			continue
		}
		for j := range pod.Spec.Containers {
			c := &pod.Spec.Containers[j]
			if c.Name == cs.Name && c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet != nil {
				return cs.State.Running.StartedAt.Time, c
			}
		}
	}
	return time.Time{}, nil
}

// askReadiness GETs c's readiness endpoint on pod's IP and says what it answered.
func askReadiness(ctx context.Context, pod *corev1.Pod, c *corev1.Container) string {
	get := c.ReadinessProbe.HTTPGet
	port := get.Port.IntValue()
	for _, p := range c.Ports {
		if p.Name == get.Port.String() {
			port = int(p.ContainerPort)
		}
	}
	url := fmt.Sprintf("http://%s%s", net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(port)), get.Path)
	ctx, cancel := context.WithTimeout(ctx, readinessAskTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err.Error()
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "its readiness endpoint does not answer: " + err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	answer := strings.Join(strings.Fields(string(body)), " ")
	if len(answer) > maxAnswerLength {
		answer = answer[:maxAnswerLength] + "…"
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, answer)
}
