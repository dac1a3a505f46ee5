package kreruntime

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
	"github.com/quintet-operators/quintet/shared/pods"
)

// defaultVolumeSize is a component's volume size when the spec has none (the CRD defaults it).
var defaultVolumeSize = resource.MustParse("1Gi")

// objectLabels are the labels of a component's objects and pods; they also select the pods.
func objectLabels(rt *v1alpha1.Runtime, component string) map[string]string {
	return map[string]string{
		v1alpha1.RuntimeLabel:        rt.Name,
		v1alpha1.ComponentLabel:      component,
		"app.kubernetes.io/name":     "kre-" + component,
		"app.kubernetes.io/instance": rt.Name,
		"app.kubernetes.io/part-of":  "kre-runtime",
		ManagedByLabel:               ManagedBy,
	}
}

// statefulSet is the StatefulSet of c: one volume per replica, pods meeting the restricted
// Pod Security level, rolled one at a time when the spec changes.
func statefulSet(rt *v1alpha1.Runtime, c component) *appsv1.StatefulSet {
	l := objectLabels(rt, c.name)
	size := c.storage.Size
	if size.IsZero() {
		size = defaultVolumeSize
	}
	claim := corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: l},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
	if c.storage.ClassName != "" {
		claim.Spec.StorageClassName = ptr.To(c.storage.ClassName)
	}
	whenDeleted := appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	if rt.Spec.VolumeRetention == v1alpha1.VolumeDelete {
		whenDeleted = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: ObjectName(c.name), Namespace: rt.Namespace, Labels: l},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To(c.replicas),
			ServiceName:         headlessName(c.name),
			Selector:            &metav1.LabelSelector{MatchLabels: l},
			PodManagementPolicy: appsv1.ParallelPodManagement,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](0)}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{claim},
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: whenDeleted, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken: ptr.To(false),
					SecurityContext:              podSecurityContext(c.runAsUser),
					Containers: []corev1.Container{{
						Name:                   c.name,
						Image:                  c.image,
						ImagePullPolicy:        corev1.PullIfNotPresent,
						Args:                   c.args,
						Env:                    c.env,
						Ports:                  c.ports,
						ReadinessProbe:         c.readiness,
						LivenessProbe:          c.liveness,
						VolumeMounts:           []corev1.VolumeMount{{Name: "data", MountPath: c.mountPath}, {Name: "tmp", MountPath: "/tmp"}},
						SecurityContext:        pods.RestrictedContainerSecurityContext(nil),
						TerminationMessagePath: corev1.TerminationMessagePathDefault,
						// A server that refuses its settings says why in its last log line.
						TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
					}},
					Volumes:      []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
					NodeSelector: c.placement.NodeSelector,
					Tolerations:  c.placement.Tolerations,
				},
			},
		},
	}
}

// podSecurityContext runs a component as uid, owning its data volume.
func podSecurityContext(uid int64) *corev1.PodSecurityContext {
	sc := pods.RestrictedPodSecurityContext(uid)
	sc.FSGroup = ptr.To(uid)
	return sc
}
