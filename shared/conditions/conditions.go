// Package conditions sets metav1.Conditions the way every Quintet controller does: each
// condition the controller owns is written on every pass with the generation it observed,
// and a pass can tell which conditions changed, so Events and log lines mark transitions
// instead of repeating on every pass.
package conditions

import (
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// Setter is an object whose status carries conditions.
type Setter interface {
	GetGeneration() int64
	GetConditions() []metav1.Condition
	SetConditions([]metav1.Condition)
}

// Set records a condition on obj with obj's current generation. The transition time moves
// only when the status changes, so writing the same condition again changes nothing.
func Set(obj Setter, conditionType string, status metav1.ConditionStatus, reason, message string) {
	conds := obj.GetConditions()
	meta.SetStatusCondition(&conds, metav1.Condition{
		Type:               conditionType,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: obj.GetGeneration(),
	})
	obj.SetConditions(conds)
}

// IsTrue reports whether the condition is present and True.
func IsTrue(obj Setter, conditionType string) bool {
	return meta.IsStatusConditionTrue(obj.GetConditions(), conditionType)
}

// Get returns the condition, or nil.
func Get(obj Setter, conditionType string) *metav1.Condition {
	return meta.FindStatusCondition(obj.GetConditions(), conditionType)
}

// Snapshot copies obj's conditions, to compare with after a pass (Transitioned).
func Snapshot(obj Setter) []metav1.Condition {
	return append([]metav1.Condition(nil), obj.GetConditions()...)
}

// Object is an API object whose status carries conditions.
type Object interface {
	runtime.Object
	Setter
	GetNamespace() string
	GetName() string
}

// Transitions emits the Event of a condition whose True means trouble (Degraded) when it
// transitions: a Warning when it turns True or fails for another reason, a Normal Event when
// it turns False after being True. A failure that lasts many passes is one Event, not one per
// pass. It remembers what it last reported for each object, so a pass that reads an object
// the cache has not yet updated does not report the same transition again. The zero value is
// ready to use; a controller keeps one for its kind.
type Transitions struct {
	mu   sync.Mutex
	last map[string]metav1.Condition // namespace/name/type -> last reported
}

// RecordDegraded reports obj's condition of that type if it transitioned since it was last
// reported, or (the first time the object is seen) since before, obj's conditions as read.
func (t *Transitions) RecordDegraded(r recorder.EventRecorder, obj Object, before []metav1.Condition, conditionType string) {
	now := Get(obj, conditionType)
	if now == nil {
		return
	}
	key := obj.GetNamespace() + "/" + obj.GetName() + "/" + conditionType
	t.mu.Lock()
	was, seen := t.last[key]
	if t.last == nil {
		t.last = map[string]metav1.Condition{}
	}
	t.last[key] = *now
	t.mu.Unlock()
	if !seen {
		if c := meta.FindStatusCondition(before, conditionType); c != nil {
			was, seen = *c, true
		}
	}
	switch {
	case seen && was.Status == now.Status && was.Reason == now.Reason:
	case now.Status == metav1.ConditionTrue:
		r.Eventf(obj, nil, corev1.EventTypeWarning, now.Reason, "Reconcile", "%s", now.Message)
	case seen && was.Status == metav1.ConditionTrue:
		r.Eventf(obj, nil, corev1.EventTypeNormal, now.Reason, "Reconcile", "%s", now.Message)
	}
}

// Forget drops what was reported of an object that is gone.
func (t *Transitions) Forget(namespace, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	prefix := namespace + "/" + name + "/"
	for key := range t.last {
		if strings.HasPrefix(key, prefix) {
			delete(t.last, key)
		}
	}
}
