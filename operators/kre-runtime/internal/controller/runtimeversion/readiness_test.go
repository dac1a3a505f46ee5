package runtimeversion

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
	"github.com/quintet-operators/quintet/operators/kre-runtime/internal/controller/kreruntime"
)

func TestAPodThatStaysUnreadySaysWhatItsReadinessEndpointAnswers(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "MongoDB: auth error: (AuthenticationFailed) Authentication failed.", http.StatusServiceUnavailable)
	}))
	defer endpoint.Close()
	port := int32(endpoint.Listener.Addr().(*net.TCPAddr).Port) //nolint:gosec // a TCP port

	now := time.Now()
	// pod makes a pod of the version whose container started at started, ready or not.
	pod := func(name string, started time.Time, ready bool) {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{v1alpha1.VersionLabel: "greeter-v1", kreruntime.ManagedByLabel: kreruntime.ManagedBy}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "stamp", Image: "krt-runner:v1",
				Ports: []corev1.ContainerPort{{Name: "health", ContainerPort: port}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
					Path: "/healthz", Port: intstr.FromString("health")}}}}}},
		}
		g.Expect(env.Client.Create(ctx, p)).To(Succeed())
		p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "127.0.0.1", ContainerStatuses: []corev1.ContainerStatus{{
			Name: "stamp", Ready: ready, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}}}}}
		g.Expect(env.Client.Status().Update(ctx, p)).To(Succeed())
	}
	pod("stuck", now.Add(-time.Minute), false)
	pod("starting", now.Add(-10*time.Second), false)
	pod("serving", now.Add(-time.Minute), true)
	rv := &v1alpha1.RuntimeVersion{ObjectMeta: metav1.ObjectMeta{Name: "greeter-v1", Namespace: ns}}

	// Read as the operator reads them: from the manager's cache, which keeps of a pod's spec
	// each container's name, ports and readiness probe.
	g.Eventually(func(g Gomega) {
		pods, err := kreruntime.Pods(ctx, reconciler.Client, rv.Namespace, map[string]string{v1alpha1.VersionLabel: rv.Name})
		g.Expect(err).NotTo(HaveOccurred())
		unready, again := unreadyPods(ctx, pods, now)
		g.Expect(unready).To(Equal([]string{"pod stuck: not ready after 30s: 503 MongoDB: auth error: (AuthenticationFailed) Authentication failed."}))
		g.Expect(again).To(BeNumerically("~", 20*time.Second, time.Second), "the starting pod is asked once its grace ends")
	}, timeout, tick).Should(Succeed())
}
