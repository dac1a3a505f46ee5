package ptemplate

import (
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha "github.com/quintet-operators/quintet/operators/ptemplate-device/api/v1alpha"
	"github.com/quintet-operators/quintet/shared/pods"
)

// ManagedByLabel marks every object the operator makes; its cache holds only those.
const ManagedByLabel, ManagedBy = "app.kubernetes.io/managed-by", "quintet-ptemplate-device"

// consumerUser is the unprivileged user consumer containers run as (restricted Pod Security).
const consumerUser = 65532

// objectLabels are the labels of what pt makes: its Module, its consumer DaemonSet and the consumer pods.
func objectLabels(pt *v1alpha.Ptemplate) map[string]string {
	return map[string]string{
		v1alpha.PtemplateLabel:       pt.Name,
		"app.kubernetes.io/name":     "ptemplate-consumer",
		"app.kubernetes.io/instance": pt.Name,
		ManagedByLabel:               ManagedBy,
	}
}

// consumerName is the name of pt's consumer DaemonSet.
func consumerName(pt *v1alpha.Ptemplate) string { return pt.Name + "-consumer" }

// consumers is pt's consumer DaemonSet: one pod per node with labels nodes that has the
// module loaded (KMM's readiness label), each with requiredDevices of the devices the
// device plugin advertises. The devices reach the container through the plugin's allocation:
// no privileged container, no hostPath to /dev.
func consumers(pt *v1alpha.Ptemplate, nodes map[string]string) *appsv1.DaemonSet {
	l := objectLabels(pt)
	nodeSelector := map[string]string{ModuleReadyLabel(pt.Namespace, pt.Name): ""}
	maps.Copy(nodeSelector, nodes)
	devices := corev1.ResourceList{corev1.ResourceName(pt.Spec.ResourceName): *resource.NewQuantity(int64(pt.Spec.RequiredDevices), resource.DecimalSI)}
	var pullSecrets []corev1.LocalObjectReference
	if pt.Spec.ImageRepoSecret != nil {
		pullSecrets = []corev1.LocalObjectReference{*pt.Spec.ImageRepoSecret}
	}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: consumerName(pt), Namespace: pt.Namespace, Labels: l},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{
					NodeSelector:                 nodeSelector,
					Tolerations:                  pt.Spec.Tolerations,
					ImagePullSecrets:             pullSecrets,
					AutomountServiceAccountToken: ptr.To(false),
					SecurityContext:              pods.RestrictedPodSecurityContext(consumerUser),
					Containers: []corev1.Container{{
						Name: "consumer", Image: pt.Spec.ConsumerImage, ImagePullPolicy: corev1.PullIfNotPresent,
						Resources:                corev1.ResourceRequirements{Limits: devices, Requests: devices},
						SecurityContext:          pods.RestrictedContainerSecurityContext(nil),
						TerminationMessagePath:   corev1.TerminationMessagePathDefault,
						TerminationMessagePolicy: corev1.TerminationMessageReadFile,
					}},
				},
			},
		},
	}
}
