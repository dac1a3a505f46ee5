package conditions

import (
	"errors"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/quintet-operators/quintet/shared/ensure"
)

func TestSetSummaryPutsDegradedBeforeProgressingBeforeTheGivenReady(t *testing.T) {
	set := func(o *object, typ string, status metav1.ConditionStatus, reason string) {
		Set(o, typ, status, reason, reason+" message")
	}
	tests := []struct {
		name                  string
		degraded, progressing metav1.ConditionStatus // "" leaves the condition out
		want                  metav1.Condition
	}{
		{"degraded and progressing", metav1.ConditionTrue, metav1.ConditionTrue,
			metav1.Condition{Status: metav1.ConditionFalse, Reason: "Broken", Message: "Broken message"}},
		{"progressing", metav1.ConditionFalse, metav1.ConditionTrue,
			metav1.Condition{Status: metav1.ConditionFalse, Reason: "Rolling", Message: "Rolling message"}},
		{"neither", metav1.ConditionFalse, metav1.ConditionFalse,
			metav1.Condition{Status: metav1.ConditionTrue, Reason: ReasonReady, Message: "all ready"}},
		{"neither set yet", "", "",
			metav1.Condition{Status: metav1.ConditionTrue, Reason: ReasonReady, Message: "all ready"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &object{ObjectMeta: metav1.ObjectMeta{Generation: 7}}
			if tt.degraded != "" {
				set(o, DegradedCondition, tt.degraded, "Broken")
				set(o, ProgressingCondition, tt.progressing, "Rolling")
			}
			SetSummary(o, metav1.ConditionTrue, ReasonReady, "all ready")
			got := Get(o, ReadyCondition)
			if got.Status != tt.want.Status || got.Reason != tt.want.Reason || got.Message != tt.want.Message || got.ObservedGeneration != 7 {
				t.Fatalf("Ready = %+v, want %+v", got, tt.want)
			}
		})
	}
	o := &object{}
	set(o, DegradedCondition, metav1.ConditionFalse, ReasonAsExpected)
	SetSummary(o, metav1.ConditionFalse, "Stopped", "scaled to zero")
	if c := Get(o, ReadyCondition); c.Status != metav1.ConditionFalse || c.Reason != "Stopped" {
		t.Fatalf("a cause of the operator's own: Ready = %+v", c)
	}
}

func TestSetDegradedSaysWhatStoppedThePassFirst(t *testing.T) {
	notOwned := fmt.Errorf("ensuring: %w", &ensure.NotOwnedError{Kind: "Service", Name: "db", Controller: "is controlled by no Runtime"})
	tests := []struct {
		name       string
		err        error
		failures   []string
		wantStatus metav1.ConditionStatus
		wantReason string
		wantMsg    string
	}{
		{"nothing wrong", nil, nil, metav1.ConditionFalse, ReasonAsExpected, "fine"},
		{"pods failing", nil, []string{"pod a: CrashLoopBackOff"}, metav1.ConditionTrue, ReasonPodsFailing, "pod a: CrashLoopBackOff"},
		{"not owned, pods failing too", notOwned, []string{"pod a: CrashLoopBackOff"}, metav1.ConditionTrue, ReasonObjectNotOwned, notOwned.Error()},
		{"rejected", reconcile.TerminalError(errors.New("invalid")), nil, metav1.ConditionTrue, ReasonObjectRejected, "terminal error: invalid"},
		{"other", errors.New("timeout"), nil, metav1.ConditionTrue, ReasonReconcileFailed, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &object{}
			SetDegraded(o, tt.err, tt.failures, "fine")
			c := Get(o, DegradedCondition)
			if c.Status != tt.wantStatus || c.Reason != tt.wantReason || c.Message != tt.wantMsg {
				t.Fatalf("Degraded = %+v, want %s %s %q", c, tt.wantStatus, tt.wantReason, tt.wantMsg)
			}
		})
	}
}
