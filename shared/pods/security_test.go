package pods

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
)

func TestRestrictedContainerSecurityContextFillsOnlyWhatIsUnset(t *testing.T) {
	restricted := &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	user := &corev1.SecurityContext{
		ReadOnlyRootFilesystem: ptr.To(true),
		Capabilities:           &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}, Drop: []corev1.Capability{"NET_RAW"}},
	}
	tests := []struct {
		name   string
		in     *corev1.SecurityContext
		want   *corev1.SecurityContext
		intact *corev1.SecurityContext // what in must still be afterwards
	}{
		{name: "none", in: nil, want: restricted},
		{name: "already restricted", in: restricted.DeepCopy(), want: restricted},
		{name: "the user's", in: user, intact: user.DeepCopy(), want: &corev1.SecurityContext{
			ReadOnlyRootFilesystem:   ptr.To(true),
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}, Drop: []corev1.Capability{"NET_RAW", "ALL"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RestrictedContainerSecurityContext(tt.in)
			if !equality.Semantic.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if tt.intact != nil && !equality.Semantic.DeepEqual(tt.in, tt.intact) {
				t.Errorf("the argument changed: %+v", tt.in)
			}
		})
	}
}

func TestRestrictedPodSecurityContextRunsAsTheUserWithTheDefaultSeccompProfile(t *testing.T) {
	sc := RestrictedPodSecurityContext(65532)
	if !*sc.RunAsNonRoot || *sc.RunAsUser != 65532 || *sc.RunAsGroup != 65532 || sc.FSGroup != nil ||
		sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Fatalf("got %+v", sc)
	}
}

func TestReady(t *testing.T) {
	pod := func(conds ...corev1.PodCondition) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Conditions: conds}}
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"no conditions", pod(), false},
		{"ready", pod(corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
			corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue}), true},
		{"not ready", pod(corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse}), false},
		{"scheduled only", pod(corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}), false},
	}
	for _, tt := range tests {
		if got := Ready(tt.pod); got != tt.want {
			t.Errorf("%s: Ready = %v, want %v", tt.name, got, tt.want)
		}
	}
}
