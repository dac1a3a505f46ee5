// Package conditions sets metav1.Conditions the way every Quintet controller does: each
// condition the controller owns is written on every pass with the generation it observed.
package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
