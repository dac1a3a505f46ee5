package minimart

import (
	"errors"
	"fmt"

	"helm.sh/helm/v3/pkg/release"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quintet-operators/quintet/operators/minimart/api/v1alpha1"
	helmrelease "github.com/quintet-operators/quintet/operators/minimart/internal/release"
	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/ensure"
)

// observation is what a pass saw and did.
type observation struct {
	// last is the release's newest revision after the pass, nil when there is none.
	last *release.Release
	// upToDate: last was made from the spec and the chart the operator runs.
	upToDate bool
	// deployed: this pass installed or upgraded the release.
	deployed bool
	// deployment is the release's Deployment as the cache has it, nil when there is none.
	deployment *appsv1.Deployment
	// releaseErr is Helm's error installing or upgrading, or the failure that is backed off.
	releaseErr error
	// otherOperation: someone else (the helm CLI) is operating on the release.
	otherOperation bool
	// err is any other error of the pass.
	err error
}

// namespaceTerminating: the API server refused an object of the release (an install, upgrade
// or restore) because the namespace is being deleted.
func (o observation) namespaceTerminating() bool {
	return ensure.IsNamespaceTerminating(o.err) || ensure.IsNamespaceTerminating(o.releaseErr)
}

// setStatus computes a Minimart's status from what a pass observed.
func setStatus(m *v1alpha1.Minimart, o observation) {
	m.Status.ObservedGeneration = m.Generation
	if o.last != nil && o.last.Info.Status == release.StatusDeployed {
		m.Status.DeployedRelease = &v1alpha1.DeployedRelease{
			Name: o.last.Name, Revision: o.last.Version, ChartVersion: o.last.Chart.Metadata.Version,
		}
	}
	m.Status.ReadyReplicas = 0
	if o.deployment != nil {
		m.Status.ReadyReplicas = o.deployment.Status.ReadyReplicas
	}
	if o.namespaceTerminating() {
		message := fmt.Sprintf("Namespace %s is being deleted, and the release with it: the operator installs and restores nothing there.", m.Namespace)
		for _, c := range []string{conditions.DegradedCondition, conditions.ProgressingCondition, conditions.ReadyCondition} {
			set(m, c, false, v1alpha1.ReasonNamespaceTerminating, message)
		}
		return
	}
	deployedAsAsked := o.upToDate && o.last.Info.Status == release.StatusDeployed
	rolledOut, rollout := rolloutState(o.deployment)
	var untrusted *helmrelease.UntrustedError
	switch {
	case o.releaseErr != nil:
		set(m, conditions.DegradedCondition, true, v1alpha1.ReasonReleaseFailed, fmt.Sprintf("Helm could not deploy the release: %v", o.releaseErr))
	case errors.As(o.err, &untrusted):
		set(m, conditions.DegradedCondition, true, v1alpha1.ReasonReleaseUntrusted, o.err.Error())
	default:
		conditions.SetDegraded(m, o.err, nil, "The release is deployed as the spec asks.")
	}
	switch {
	case untrusted != nil:
		set(m, conditions.ProgressingCondition, false, v1alpha1.ReasonReleaseUntrusted, noRelease)
	case o.otherOperation:
		set(m, conditions.ProgressingCondition, true, v1alpha1.ReasonOtherOperation, fmt.Sprintf(
			"Release %s revision %d is %s by another client (helm); the operator waits for it to end.", o.last.Name, o.last.Version, o.last.Info.Status))
	case o.releaseErr != nil:
		set(m, conditions.ProgressingCondition, false, v1alpha1.ReasonReleaseFailed, noRelease)
	case !deployedAsAsked:
		set(m, conditions.ProgressingCondition, false, conditions.ReasonReconcileFailed, noRelease)
	case !rolledOut:
		reason := v1alpha1.ReasonDeploymentNotAvailable
		if o.deployed {
			reason = v1alpha1.ReasonReleaseDeployed
		}
		set(m, conditions.ProgressingCondition, true, reason, fmt.Sprintf("Release %s revision %d is deployed; %s", o.last.Name, o.last.Version, rollout))
	default:
		set(m, conditions.ProgressingCondition, false, conditions.ReasonStable, "Nothing is changing.")
	}
	if !deployedAsAsked {
		conditions.SetSummary(m, metav1.ConditionFalse, conditions.ReasonReconcileFailed, noRelease)
		return
	}
	conditions.SetSummary(m, metav1.ConditionTrue, conditions.ReasonReady,
		fmt.Sprintf("Release %s revision %d is deployed; %s", o.last.Name, o.last.Version, rollout))
}

// noRelease says that no release is deployed for the spec's generation.
const noRelease = "No release is deployed for this generation."

// rolloutState says whether d has rolled out: every replica updated and available, none
// of an older template left, as `kubectl rollout status` checks.
func rolloutState(d *appsv1.Deployment) (bool, string) {
	if d == nil {
		return false, "its Deployment does not exist yet."
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	switch {
	case s.ObservedGeneration < d.Generation:
		return false, "its Deployment's controller has not seen its latest spec yet."
	case s.UpdatedReplicas < want || s.Replicas > s.UpdatedReplicas:
		return false, fmt.Sprintf("its Deployment has %d of %d replicas updated.", s.UpdatedReplicas, want)
	case s.AvailableReplicas < want:
		return false, fmt.Sprintf("its Deployment has %d of %d replicas available.", s.AvailableReplicas, want)
	}
	return true, fmt.Sprintf("its Deployment has %d of %d replicas available.", s.AvailableReplicas, want)
}

func set(m *v1alpha1.Minimart, conditionType string, status bool, reason, message string) {
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	conditions.Set(m, conditionType, s, reason, message)
}
