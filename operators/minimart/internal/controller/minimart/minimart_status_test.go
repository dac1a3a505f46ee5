package minimart

import (
	"errors"
	"fmt"
	"testing"

	"helm.sh/helm/v3/pkg/release"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/quintet-operators/quintet/operators/minimart/api/v1alpha1"
	helmrelease "github.com/quintet-operators/quintet/operators/minimart/internal/release"
	"github.com/quintet-operators/quintet/shared/conditions"
)

// deploymentWith is the release's Deployment of 2 replicas, available of them as given.
func deploymentWith(available int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Generation: 2},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2,
			ReadyReplicas: available, AvailableReplicas: available},
	}
}

// refusedInTerminatingNamespace is the API server's refusal of a new object in a namespace
// being deleted.
var refusedInTerminatingNamespace = &apierrors.StatusError{ErrStatus: metav1.Status{
	Reason:  metav1.StatusReasonForbidden,
	Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}},
}}

func TestSetStatus(t *testing.T) {
	deployed := revision(3, release.StatusDeployed, "Shop", now())
	failed := revision(4, release.StatusFailed, "Shop", now())
	previous := &v1alpha1.DeployedRelease{Name: "shop", Revision: 3, ChartVersion: "0.1.0"}
	type want struct {
		ready, progressing, degraded string // condition reasons; Ready True only with ReasonReady
		release                      *v1alpha1.DeployedRelease
		readyReplicas                int32
	}
	cases := []struct {
		name string
		o    observation
		want want
	}{
		{"just upgraded, rolling out", observation{last: deployed, upToDate: true, deployed: true, deployment: deploymentWith(1)},
			want{v1alpha1.ReasonReleaseDeployed, v1alpha1.ReasonReleaseDeployed, conditions.ReasonAsExpected, previous, 1}},
		{"deployed and available", observation{last: deployed, upToDate: true, deployment: deploymentWith(2)},
			want{conditions.ReasonReady, conditions.ReasonStable, conditions.ReasonAsExpected, previous, 2}},
		{"a replica lost later", observation{last: deployed, upToDate: true, deployment: deploymentWith(1)},
			want{v1alpha1.ReasonDeploymentNotAvailable, v1alpha1.ReasonDeploymentNotAvailable, conditions.ReasonAsExpected, previous, 1}},
		{"no Deployment yet", observation{last: deployed, upToDate: true},
			want{v1alpha1.ReasonDeploymentNotAvailable, v1alpha1.ReasonDeploymentNotAvailable, conditions.ReasonAsExpected, previous, 0}},
		{"the upgrade failed: the deployed release stays in status", observation{last: failed, upToDate: true, releaseErr: errors.New("port taken"), deployment: deploymentWith(2)},
			want{v1alpha1.ReasonReleaseFailed, v1alpha1.ReasonReleaseFailed, v1alpha1.ReasonReleaseFailed, previous, 2}},
		{"someone runs helm uninstall", observation{last: revision(3, release.StatusUninstalling, "Shop", now()), otherOperation: true, deployment: deploymentWith(2)},
			want{v1alpha1.ReasonOtherOperation, v1alpha1.ReasonOtherOperation, conditions.ReasonAsExpected, previous, 2}},
		{"a forged revision reaches outside the namespace", observation{err: fmt.Errorf("history: %w", &helmrelease.UntrustedError{Secret: "sh.helm.release.v1.shop.v1", Namespace: "shop", Why: "holds Deployment x in namespace kube-system"})},
			want{v1alpha1.ReasonReleaseUntrusted, v1alpha1.ReasonReleaseUntrusted, v1alpha1.ReasonReleaseUntrusted, previous, 0}},
		{"the history could not be read", observation{err: errors.New("connection refused")},
			want{conditions.ReasonReconcileFailed, conditions.ReasonReconcileFailed, conditions.ReasonReconcileFailed, previous, 0}},
		// The page is still served (readyReplicas), but the release is not as it should be:
		// Ready says Degraded's reason, as every Quintet kind's Ready does.
		{"drift could not be restored, the page still served", observation{last: deployed, upToDate: true, err: errors.New("conflict"), deployment: deploymentWith(2)},
			want{conditions.ReasonReconcileFailed, conditions.ReasonStable, conditions.ReasonReconcileFailed, previous, 2}},
		// Its namespace's deletion took the Service, and the API server refused it back: not
		// a failure to look at, and no retry.
		{"the namespace is being deleted", observation{last: deployed, upToDate: true, err: refusedInTerminatingNamespace, deployment: deploymentWith(2)},
			want{v1alpha1.ReasonNamespaceTerminating, v1alpha1.ReasonNamespaceTerminating, v1alpha1.ReasonNamespaceTerminating, previous, 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := &v1alpha1.Minimart{ObjectMeta: metav1.ObjectMeta{Generation: 5}}
			m.Status.DeployedRelease = previous
			setStatus(m, c.o)
			for condType, reason := range map[string]string{conditions.ReadyCondition: c.want.ready,
				conditions.ProgressingCondition: c.want.progressing, conditions.DegradedCondition: c.want.degraded} {
				got := conditions.Get(m, condType)
				if got == nil || got.Reason != reason || got.ObservedGeneration != 5 {
					t.Errorf("%s = %+v, want reason %s at generation 5", condType, got, reason)
				}
			}
			if ready := conditions.IsTrue(m, conditions.ReadyCondition); ready != (c.want.ready == conditions.ReasonReady) {
				t.Errorf("Ready is %v", ready)
			}
			if *m.Status.DeployedRelease != *c.want.release || m.Status.ReadyReplicas != c.want.readyReplicas || m.Status.ObservedGeneration != 5 {
				t.Errorf("status %+v, want release %+v, %d ready replicas", m.Status, c.want.release, c.want.readyReplicas)
			}
		})
	}
}
