package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultImage is the image of the tutorial's gordon pods.
const DefaultImage = "prgcont/gordon:v1.0"

// GordonSpec is the desired state of a Gordon.
type GordonSpec struct {
	// gordon describes the pods to run.
	// +required
	Gordon GordonPods `json:"gordon"`
}

// GordonPods describes the bare pods a Gordon keeps running.
type GordonPods struct {
	// replicas is how many pods to keep running.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=1
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// image of the gordon container.
	// +kubebuilder:default="prgcont/gordon:v1.0"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="!self.contains(' ')",message="image must not contain spaces"
	// +optional
	Image string `json:"image,omitempty"`

	// imagePullPolicy of the gordon container.
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	// +kubebuilder:default=IfNotPresent
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// resources of the gordon container.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// nodeSelector for the pods.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations of the pods.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// GordonStatus is the observed state of a Gordon.
type GordonStatus struct {
	// observedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// replicas is the number of pods the Gordon operates (created, not terminating).
	// +optional
	Replicas int32 `json:"replicas"`

	// readyReplicas is the number of those pods that are Ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// pods are the names of the pods this Gordon operates, sorted.
	// +listType=set
	// +optional
	Pods []string `json:"pods,omitempty"`

	// selector is the label selector of the pods, for the scale subresource.
	// +optional
	Selector string `json:"selector,omitempty"`

	// conditions: Ready, Progressing, Degraded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Gordon keeps a number of bare pods running, replacing those that are deleted, evicted or
// terminated, and reports which pods belong to it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.gordon.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=gn,categories=quintet
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.gordon.replicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Gordon struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state.
	// +required
	Spec GordonSpec `json:"spec"`

	// status is the observed state.
	// +optional
	Status GordonStatus `json:"status,omitempty"`
}

// GordonList is a list of Gordons.
// +kubebuilder:object:root=true
type GordonList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Gordon `json:"items"`
}

// DesiredReplicas returns spec.gordon.replicas, 1 when unset (the CRD default).
func (g *Gordon) DesiredReplicas() int32 {
	if g.Spec.Gordon.Replicas == nil {
		return 1
	}
	return *g.Spec.Gordon.Replicas
}

// GetConditions returns the status conditions.
func (g *Gordon) GetConditions() []metav1.Condition { return g.Status.Conditions }

// SetConditions replaces the status conditions.
func (g *Gordon) SetConditions(c []metav1.Condition) { g.Status.Conditions = c }
