package conditions

import (
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/quintet-operators/quintet/shared/ensure"
	"github.com/quintet-operators/quintet/shared/pods"
)

// SetSummary sets Ready, the positive-polarity summary of the negative-polarity conditions:
// False with Degraded's reason and message while Degraded is True, else False with
// Progressing's while Progressing is True, else as given: True with what is ready, or False
// with a cause of the operator's own that is neither (a version Stopped on purpose, a kernel
// module loaded nowhere yet).
func SetSummary(obj Setter, status metav1.ConditionStatus, reason, message string) {
	for _, cause := range []string{DegradedCondition, ProgressingCondition} {
		if c := Get(obj, cause); c != nil && c.Status == metav1.ConditionTrue {
			Set(obj, ReadyCondition, metav1.ConditionFalse, c.Reason, c.Message)
			return
		}
	}
	Set(obj, ReadyCondition, status, reason, message)
}

// SetDegraded sets Degraded from what stopped a pass, if anything (ErrorReason, with the
// error as its message), else from the pods that cannot run (pods.Failure), else False
// with healthy as its message.
func SetDegraded(obj Setter, err error, podFailures []string, healthy string) {
	switch {
	case err != nil:
		Set(obj, DegradedCondition, metav1.ConditionTrue, ErrorReason(err), err.Error())
	case len(podFailures) > 0:
		Set(obj, DegradedCondition, metav1.ConditionTrue, ReasonPodsFailing, pods.FailureSummary(podFailures))
	default:
		Set(obj, DegradedCondition, metav1.ConditionFalse, ReasonAsExpected, healthy)
	}
}

// ErrorReason is the Degraded reason of a pass's error: an object of someone else's
// (ensure.NotOwnedError), one the API server rejected (a terminal error), or another failure,
// which is retried.
func ErrorReason(err error) string {
	switch _, notOwned := ensure.IsNotOwned(err); {
	case notOwned:
		return ReasonObjectNotOwned
	case errors.Is(err, reconcile.TerminalError(nil)):
		return ReasonObjectRejected
	}
	return ReasonReconcileFailed
}
