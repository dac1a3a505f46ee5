package gordon

import (
	"errors"
	"testing"

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
	type want struct {
		ready, progressing, degraded string // reasons
		readyStatus                  metav1.ConditionStatus
	}
	tests := []struct {
		name    string
		desired int32
		pods    []corev1.Pod
		res     syncResult
		want    want
	}{
		{"all ready", 2, []corev1.Pod{ready, ready2}, syncResult{},
			want{v1.ReasonAllPodsReady, v1.ReasonStable, v1.ReasonAsExpected, metav1.ConditionTrue}},
		{"zero replicas is ready", 0, nil, syncResult{},
			want{v1.ReasonAllPodsReady, v1.ReasonStable, v1.ReasonAsExpected, metav1.ConditionTrue}},
		{"scaling up", 3, []corev1.Pod{ready}, syncResult{},
			want{v1.ReasonScalingUp, v1.ReasonScalingUp, v1.ReasonAsExpected, metav1.ConditionFalse}},
		{"scaling down", 1, []corev1.Pod{ready, ready2}, syncResult{},
			want{v1.ReasonScalingDown, v1.ReasonScalingDown, v1.ReasonAsExpected, metav1.ConditionFalse}},
		{"pods not ready", 2, []corev1.Pod{ready, unready}, syncResult{},
			want{v1.ReasonPodsNotReady, v1.ReasonPodsNotReady, v1.ReasonAsExpected, metav1.ConditionFalse}},
		{"create failed", 2, []corev1.Pod{ready}, syncResult{createErr: errors.New("forbidden")},
			want{v1.ReasonScalingUp, v1.ReasonScalingUp, v1.ReasonPodCreateFailed, metav1.ConditionFalse}},
		{"delete failed", 1, []corev1.Pod{ready, ready2}, syncResult{deleteErr: errors.New("boom")},
			want{v1.ReasonScalingDown, v1.ReasonScalingDown, v1.ReasonPodDeleteFailed, metav1.ConditionFalse}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &v1.Gordon{ObjectMeta: metav1.ObjectMeta{Name: "g", Generation: 7}}
			g.Spec.Gordon.Replicas = ptr.To(tt.desired)
			setStatus(g, tt.pods, tt.res)
			for condType, reason := range map[string]string{
				v1.ReadyCondition: tt.want.ready, v1.ProgressingCondition: tt.want.progressing, v1.DegradedCondition: tt.want.degraded,
			} {
				c := conditions.Get(g, condType)
				if c == nil || c.Reason != reason || c.ObservedGeneration != 7 {
					t.Errorf("%s = %+v, want reason %s at generation 7", condType, c, reason)
				}
			}
			if got := conditions.Get(g, v1.ReadyCondition).Status; got != tt.want.readyStatus {
				t.Errorf("Ready status = %s, want %s", got, tt.want.readyStatus)
			}
			if g.Status.ObservedGeneration != 7 || int(g.Status.Replicas) != len(tt.pods) || len(g.Status.Pods) != len(tt.pods) {
				t.Errorf("status = %+v", g.Status)
			}
			if g.Status.Selector != v1.GordonLabel+"=g" {
				t.Errorf("selector = %q", g.Status.Selector)
			}
		})
	}
}
