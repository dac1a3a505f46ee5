// Package conditions is the status vocabulary of every Quintet operator (model: fluxcd/pkg
// runtime/conditions and cluster-api's util/conditions): the condition types Ready,
// Progressing and Degraded and the reasons every operator uses; Set, which writes a condition
// with the generation it observed on every pass; SetDegraded, which says what stopped a pass;
// SetSummary, which derives Ready from the negative-polarity conditions; and Transitions,
// which turns a condition's transitions into Events once each. An operator's API package
// declares only the conditions and reasons that are its own.
package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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

// Object is an API object whose status carries conditions.
type Object interface {
	runtime.Object
	Setter
	GetNamespace() string
	GetName() string
}
