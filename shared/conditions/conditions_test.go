package conditions

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientevents "k8s.io/client-go/tools/events"
)

// object is the smallest API object with conditions.
type object struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	conds []metav1.Condition
}

func (o *object) DeepCopyObject() runtime.Object     { c := *o; return &c }
func (o *object) GetConditions() []metav1.Condition  { return o.conds }
func (o *object) SetConditions(c []metav1.Condition) { o.conds = c }

func TestSetRecordsTheGenerationAndKeepsTheTransitionTimeOfAnUnchangedStatus(t *testing.T) {
	o := &object{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
	Set(o, "Ready", metav1.ConditionFalse, "Waiting", "not yet")
	first := Get(o, "Ready")
	if first == nil || first.ObservedGeneration != 3 || first.Reason != "Waiting" {
		t.Fatalf("condition = %+v", first)
	}
	since := first.LastTransitionTime
	time.Sleep(1100 * time.Millisecond) // transition times have second precision
	o.Generation = 4
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

func TestTransitionsReportEachTransitionOnce(t *testing.T) {
	events := clientevents.NewFakeRecorder(10)
	o := &object{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	var tr Transitions
	report := func(before []metav1.Condition) { tr.Record(events, o, before, "Degraded") }

	before := snapshot(o)
	Set(o, "Degraded", metav1.ConditionFalse, "AsExpected", "fine")
	report(before)
	Set(o, "Degraded", metav1.ConditionTrue, "PodCreateFailed", "quota exceeded")
	report(before)
	o.Generation = 2
	Set(o, "Degraded", metav1.ConditionTrue, "PodCreateFailed", "quota exceeded again")
	report(before) // a stale read: before still says nothing of the failure
	Set(o, "Degraded", metav1.ConditionTrue, "PodDeleteFailed", "forbidden")
	report(before)
	Set(o, "Degraded", metav1.ConditionFalse, "AsExpected", "recovered")
	report(before)
	report(before)
	want := []string{"Warning PodCreateFailed quota exceeded", "Warning PodDeleteFailed forbidden", "Normal AsExpected recovered"}
	if got := drain(events); !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}

	// Seen for the first time (a restarted manager): what the object said before counts.
	var restarted Transitions
	restarted.Record(events, o, snapshot(o), "Degraded")
	tr.Forget("", "")
	tr.Record(events, o, snapshot(o), "Degraded")
	if got := drain(events); len(got) != 0 {
		t.Fatalf("no transition since the object was read, yet events %q", got)
	}
}

func drain(r *clientevents.FakeRecorder) []string {
	var got []string
	for {
		select {
		case e := <-r.Events:
			got = append(got, e)
		default:
			return got
		}
	}
}

// snapshot copies o's conditions, as the status patcher keeps them from the start of a pass.
func snapshot(o Setter) []metav1.Condition {
	return append([]metav1.Condition(nil), o.GetConditions()...)
}
