package conditions

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type object struct {
	generation int64
	conds      []metav1.Condition
}

func (o *object) GetGeneration() int64               { return o.generation }
func (o *object) GetConditions() []metav1.Condition  { return o.conds }
func (o *object) SetConditions(c []metav1.Condition) { o.conds = c }

func TestSetRecordsTheGenerationAndKeepsTheTransitionTimeOfAnUnchangedStatus(t *testing.T) {
	o := &object{generation: 3}
	Set(o, "Ready", metav1.ConditionFalse, "Waiting", "not yet")
	first := Get(o, "Ready")
	if first == nil || first.ObservedGeneration != 3 || first.Reason != "Waiting" {
		t.Fatalf("condition = %+v", first)
	}
	since := first.LastTransitionTime
	time.Sleep(1100 * time.Millisecond) // transition times have second precision
	o.generation = 4
	Set(o, "Ready", metav1.ConditionFalse, "StillWaiting", "still not")
	second := Get(o, "Ready")
	if second.ObservedGeneration != 4 || second.Reason != "StillWaiting" || !second.LastTransitionTime.Equal(&since) {
		t.Fatalf("same status must keep the transition time: %+v (was %v)", second, since)
	}
	Set(o, "Ready", metav1.ConditionTrue, "Done", "ok")
	if !IsTrue(o, "Ready") || Get(o, "Ready").LastTransitionTime.Equal(&since) {
		t.Fatalf("a new status must move the transition time: %+v", Get(o, "Ready"))
	}
	if IsTrue(o, "Missing") || Get(o, "Missing") != nil {
		t.Fatal("an absent condition is neither true nor found")
	}
}
