package gordon

import (
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1 "github.com/quintet-operators/quintet/operators/gordon/api/v1"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// testPod is a pod created at epoch+age; node "" means unscheduled.
func testPod(name string, age time.Duration, node string, phase corev1.PodPhase, ready bool) corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(epoch.Add(age))},
		Spec:       corev1.PodSpec{NodeName: node},
		Status:     corev1.PodStatus{Phase: phase, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
}

func names(pods []corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	return out
}

func TestPodsToDeleteRemovesNotReadyPodsFirstThenTheNewest(t *testing.T) {
	ready := func(name string, age time.Duration) corev1.Pod {
		return testPod(name, age, "n1", corev1.PodRunning, true)
	}
	tests := []struct {
		name string
		pods []corev1.Pod
		n    int
		want []string
	}{
		{"none to delete", []corev1.Pod{ready("a", 0)}, 0, nil},
		{"newest ready first", []corev1.Pod{ready("old", 0), ready("new", time.Hour), ready("mid", time.Minute)}, 2, []string{"new", "mid"}},
		{"not ready before ready, even if older", []corev1.Pod{
			ready("young-ready", time.Hour), testPod("old-unready", 0, "n1", corev1.PodRunning, false),
		}, 1, []string{"old-unready"}},
		{"unscheduled, then pending, then unready", []corev1.Pod{
			testPod("unready", 0, "n1", corev1.PodRunning, false),
			testPod("pending", 0, "n1", corev1.PodPending, false),
			testPod("unscheduled", 0, "", corev1.PodPending, false),
			ready("ready", 0),
		}, 3, []string{"unscheduled", "pending", "unready"}},
		{"more than there are", []corev1.Pod{ready("a", 0)}, 5, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := names(podsToDelete(tt.pods, tt.n))
			if len(got) == 0 {
				got = nil
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("podsToDelete = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestClassifyPodsSeparatesTerminatedAndIgnoresTerminating(t *testing.T) {
	terminating := testPod("terminating", 0, "n1", corev1.PodRunning, true)
	terminating.DeletionTimestamp = ptr.To(metav1.NewTime(epoch))
	pods := []corev1.Pod{
		testPod("running", 0, "n1", corev1.PodRunning, true),
		testPod("pending", 0, "", corev1.PodPending, false),
		testPod("failed", 0, "n1", corev1.PodFailed, false),
		testPod("succeeded", 0, "n1", corev1.PodSucceeded, false),
		terminating,
	}
	active, terminated := classifyPods(pods)
	if got := names(active); !slices.Equal(got, []string{"running", "pending"}) {
		t.Errorf("active = %v", got)
	}
	if got := names(terminated); !slices.Equal(got, []string{"failed", "succeeded"}) {
		t.Errorf("terminated = %v", got)
	}
}

func TestNewPodMeetsTheRestrictedPodSecurityLevel(t *testing.T) {
	g := &v1.Gordon{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "ns"}}
	pod := newPod(g, nil)
	if pod.GenerateName != "g-" || pod.Labels[v1.GordonLabel] != "g" {
		t.Fatalf("name %q labels %v", pod.GenerateName, pod.Labels)
	}
	if got := pod.Spec.Containers[0].Image; got != v1.DefaultImage {
		t.Errorf("image = %q, want the default %q", got, v1.DefaultImage)
	}
	psc := pod.Spec.SecurityContext
	if !*psc.RunAsNonRoot || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context %+v", psc)
	}
	sc := pod.Spec.Containers[0].SecurityContext
	if *sc.AllowPrivilegeEscalation || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container security context %+v", sc)
	}
}

func TestSlowStartStopsAfterTheFirstFailingBatch(t *testing.T) {
	var calls atomic.Int32
	created, err := slowStart(10, func() error {
		// Batches of 1, 2, 4: the fourth call (in the third batch) fails.
		if calls.Add(1) == 4 {
			return errors.New("quota exceeded")
		}
		return nil
	})
	if err == nil {
		t.Fatal("want the error of the failing call")
	}
	if calls.Load() != 7 || created != 6 {
		t.Fatalf("calls = %d, created = %d; want 7 calls (1+2+4) and 6 created", calls.Load(), created)
	}
	calls.Store(0)
	created, err = slowStart(5, func() error { calls.Add(1); return nil })
	if err != nil || created != 5 || calls.Load() != 5 {
		t.Fatalf("created = %d, calls = %d, err = %v; want 5, 5, nil", created, calls.Load(), err)
	}
}

func TestPodsGetTheProxySettingsOLMGaveTheManager(t *testing.T) {
	g := &v1.Gordon{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "ns"}}
	proxyEnv := []corev1.EnvVar{{Name: "HTTPS_PROXY", Value: "http://proxy.example:3128"}, {Name: "NO_PROXY", Value: ".svc"}}
	if got := newPod(g, proxyEnv).Spec.Containers[0].Env; !slices.Equal(got, proxyEnv) {
		t.Errorf("env %v, want %v", got, proxyEnv)
	}
}

func TestNewPodCarriesTheWholeTemplateAndKeepsTheRestrictedDefaults(t *testing.T) {
	g := &v1.Gordon{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "ns"}}
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}}
	g.Spec.Gordon.Env = []corev1.EnvVar{{Name: "GREETING", Value: "hi"}}
	g.Spec.Gordon.ReadinessProbe, g.Spec.Gordon.LivenessProbe, g.Spec.Gordon.StartupProbe = probe, probe, probe
	g.Spec.Gordon.SecurityContext = &corev1.SecurityContext{
		ReadOnlyRootFilesystem: ptr.To(true),
		Capabilities:           &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}},
	}
	proxyEnv := []corev1.EnvVar{{Name: "NO_PROXY", Value: ".svc"}}
	c := newPod(g, proxyEnv).Spec.Containers[0]
	if want := append(slices.Clone(proxyEnv), g.Spec.Gordon.Env...); !slices.Equal(c.Env, want) {
		t.Errorf("env %v, want the proxy variables then spec.gordon.env: %v", c.Env, want)
	}
	if c.ReadinessProbe != probe || c.LivenessProbe != probe || c.StartupProbe != probe {
		t.Errorf("probes %v %v %v", c.ReadinessProbe, c.LivenessProbe, c.StartupProbe)
	}
	sc := c.SecurityContext
	if !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation ||
		!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || !slices.Equal(sc.Capabilities.Add, []corev1.Capability{"NET_BIND_SERVICE"}) {
		t.Errorf("container security context %+v: the user's settings with the restricted defaults", sc)
	}
	if g.Spec.Gordon.SecurityContext.AllowPrivilegeEscalation != nil || g.Spec.Gordon.SecurityContext.Capabilities.Drop != nil {
		t.Error("newPod changed the Gordon's spec")
	}
}

func TestTemplateHashFollowsThePodSpec(t *testing.T) {
	g := &v1.Gordon{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "ns"}}
	hash := func() string { return newPod(g, nil).Labels[v1.TemplateHashLabel] }
	first := hash()
	if first == "" || hash() != first {
		t.Fatalf("hash %q is not stable", first)
	}
	g.Spec.Gordon.Replicas = ptr.To[int32](7)
	if hash() != first {
		t.Error("replicas are not part of the pod template")
	}
	g.Spec.Gordon.Env = []corev1.EnvVar{{Name: "A", Value: "1"}}
	changed := hash()
	if changed == first {
		t.Error("a changed env must change the hash")
	}
	g.Spec.Gordon.Env = nil
	if hash() != first {
		t.Error("reverting the env must give the first hash back")
	}
}
