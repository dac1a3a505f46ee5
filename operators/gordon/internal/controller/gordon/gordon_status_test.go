package gordon

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/quintet-operators/quintet/operators/gordon/api/v1"
	"github.com/quintet-operators/quintet/shared/conditions"
)

func TestSetStatus(t *testing.T) {
	ready := testPod("g-a", 0, "n1", corev1.PodRunning, true)
	ready2 := testPod("g-b", 0, "n1", corev1.PodRunning, true)
	unready := testPod("g-c", 0, "n1", corev1.PodRunning, false)
	crashing := testPod("g-d", 0, "n1", corev1.PodRunning, false)
	crashing.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: appName,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3}}}}
	evicted := testPod("g-e", 0, "n1", corev1.PodFailed, false)
	evicted.Status.Reason = "Evicted"
	type want struct {
		// Ready says Degraded's reason while Degraded is True, else Progressing's.
		ready, progressing, degraded string // reasons
		readyStatus                  metav1.ConditionStatus
	}
	tests := []struct {
		name    string
		desired int32
		pods    []corev1.Pod // of the current template
		res     syncResult
		want    want
		message string // in Degraded's message
	}{
		{"all ready", 2, []corev1.Pod{ready, ready2}, syncResult{},
			want{v1.ReasonAllPodsReady, conditions.ReasonStable, conditions.ReasonAsExpected, metav1.ConditionTrue}, ""},
		{"zero replicas is ready", 0, nil, syncResult{},
			want{v1.ReasonAllPodsReady, conditions.ReasonStable, conditions.ReasonAsExpected, metav1.ConditionTrue}, ""},
		{"scaling up", 3, []corev1.Pod{ready}, syncResult{},
			want{v1.ReasonScalingUp, v1.ReasonScalingUp, conditions.ReasonAsExpected, metav1.ConditionFalse}, ""},
		{"scaling down", 1, []corev1.Pod{ready, ready2}, syncResult{},
			want{v1.ReasonScalingDown, v1.ReasonScalingDown, conditions.ReasonAsExpected, metav1.ConditionFalse}, ""},
		{"pods not ready", 2, []corev1.Pod{ready, unready}, syncResult{},
			want{v1.ReasonPodsNotReady, v1.ReasonPodsNotReady, conditions.ReasonAsExpected, metav1.ConditionFalse}, ""},
		{"create failed", 2, []corev1.Pod{ready}, syncResult{createErr: errors.New("forbidden")},
			want{v1.ReasonPodCreateFailed, v1.ReasonScalingUp, v1.ReasonPodCreateFailed, metav1.ConditionFalse}, ""},
		{"delete failed", 1, []corev1.Pod{ready, ready2}, syncResult{deleteErr: errors.New("boom")},
			want{v1.ReasonPodDeleteFailed, v1.ReasonScalingDown, v1.ReasonPodDeleteFailed, metav1.ConditionFalse}, ""},
		{"rolling update", 2, []corev1.Pod{ready}, syncResult{outdated: []corev1.Pod{ready2}},
			want{v1.ReasonRollingUpdate, v1.ReasonRollingUpdate, conditions.ReasonAsExpected, metav1.ConditionFalse}, ""},
		{"crash-looping pod", 2, []corev1.Pod{ready, crashing}, syncResult{},
			want{conditions.ReasonPodsFailing, v1.ReasonPodsNotReady, conditions.ReasonPodsFailing, metav1.ConditionFalse},
			"pod g-d: CrashLoopBackOff (last exit code 3 after 0 restarts)"},
		{"terminated pod held by the back-off", 2, []corev1.Pod{ready}, syncResult{terminated: []corev1.Pod{evicted}, replaceAfter: time.Second},
			want{conditions.ReasonPodsFailing, v1.ReasonScalingUp, conditions.ReasonPodsFailing, metav1.ConditionFalse},
			"pod g-e Failed (Evicted); terminated pods are replaced after a back-off that doubles from 10s to 5m0s"},
		{"terminated pod replaced at once", 2, []corev1.Pod{ready}, syncResult{terminated: []corev1.Pod{evicted}},
			want{v1.ReasonScalingUp, v1.ReasonScalingUp, conditions.ReasonAsExpected, metav1.ConditionFalse}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &v1.Gordon{ObjectMeta: metav1.ObjectMeta{Name: "g", Generation: 7}}
			g.Spec.Gordon.Replicas = ptr.To(tt.desired)
			tt.res.current = tt.pods
			setStatus(g, tt.res)
			for condType, reason := range map[string]string{
				conditions.ReadyCondition: tt.want.ready, conditions.ProgressingCondition: tt.want.progressing, conditions.DegradedCondition: tt.want.degraded,
			} {
				c := conditions.Get(g, condType)
				if c == nil || c.Reason != reason || c.ObservedGeneration != 7 {
					t.Errorf("%s = %+v, want reason %s at generation 7", condType, c, reason)
				}
			}
			if got := conditions.Get(g, conditions.ReadyCondition).Status; got != tt.want.readyStatus {
				t.Errorf("Ready status = %s, want %s", got, tt.want.readyStatus)
			}
			if d := conditions.Get(g, conditions.DegradedCondition); !strings.Contains(d.Message, tt.message) {
				t.Errorf("Degraded message %q does not say %q", d.Message, tt.message)
			}
			active := len(tt.pods) + len(tt.res.outdated)
			if g.Status.ObservedGeneration != 7 || int(g.Status.Replicas) != active || len(g.Status.Pods) != active ||
				int(g.Status.UpdatedReplicas) != len(tt.pods) {
				t.Errorf("status = %+v", g.Status)
			}
			if g.Status.Selector != v1.GordonLabel+"=g" {
				t.Errorf("selector = %q", g.Status.Selector)
			}
		})
	}
}
