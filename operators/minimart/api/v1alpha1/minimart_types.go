package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MinimartSpec is the values of the minimart chart's release, typed: its schema is the
// chart's values.schema.json (generated from it), so the API server rejects a bad value with
// its field path before Helm renders anything. Defaults are the chart's values.yaml.
type MinimartSpec struct {
	// ReplicaCount is how many pods serve the store.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=20
	// +kubebuilder:default=1
	// +optional
	ReplicaCount *int32 `json:"replicaCount,omitempty"`

	// StoreName is the store's name, the title of its page.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:default="Minimart"
	// +optional
	StoreName string `json:"storeName,omitempty"`

	// Products are listed on the store's page, in this order.
	// +kubebuilder:validation:MaxItems=50
	// +listType=map
	// +listMapKey=name
	// +optional
	Products []Product `json:"products,omitempty"`

	// Image is the minimart app's container image.
	// +kubebuilder:default={}
	// +optional
	Image Image `json:"image,omitempty"`

	// Service exposes the store's page on port 80 (a NodePort Service by default).
	// +kubebuilder:default={}
	// +optional
	Service Service `json:"service,omitempty"`

	// NodeSelector constrains the store's pods to nodes with these labels.
	// +kubebuilder:validation:MaxProperties=20
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations of the store's pods.
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.operator) || t.operator in ['Exists', 'Equal'])",message="a toleration's operator is Exists or Equal"
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.effect) || t.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])",message="a toleration's effect is NoSchedule, PreferNoSchedule or NoExecute"
	// +listType=atomic
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// Product is one line of the store's page.
type Product struct {
	// Name of the product, unique in the store.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +required
	Name string `json:"name"`
	// Price in the store's currency, with two decimals ("3.50").
	// +kubebuilder:validation:Pattern=`^[0-9]{1,6}\.[0-9]{2}$`
	// +required
	Price string `json:"price"`
}

// Image names a container image.
type Image struct {
	// Repository of the image, without tag.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([a-z0-9._:/-]*[a-z0-9])?$`
	// +kubebuilder:default="127.0.0.1:5000/quintet/minimart-app"
	// +optional
	Repository string `json:"repository,omitempty"`
	// Tag of the image.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`
	// +kubebuilder:default="v0.1.0"
	// +optional
	Tag string `json:"tag,omitempty"`
	// PullPolicy of the container.
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	// +kubebuilder:default=IfNotPresent
	// +optional
	PullPolicy string `json:"pullPolicy,omitempty"`
}

// Service is how the store's page is reached.
// +kubebuilder:validation:XValidation:rule="!has(self.nodePort) || (has(self.type) && self.type == 'NodePort')",message="nodePort is only allowed when type is NodePort",fieldPath=".nodePort"
type Service struct {
	// Type of the Service.
	// +kubebuilder:validation:Enum=NodePort;ClusterIP
	// +kubebuilder:default=NodePort
	// +optional
	Type string `json:"type,omitempty"`
	// Port of the Service.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=80
	// +optional
	Port int32 `json:"port,omitempty"`
	// NodePort is the node port of a NodePort Service; the API server picks one when unset.
	// +kubebuilder:validation:Minimum=30000
	// +kubebuilder:validation:Maximum=32767
	// +optional
	NodePort *int32 `json:"nodePort,omitempty"`
}

// DeployedRelease is the Helm release a Minimart's spec was last deployed as.
type DeployedRelease struct {
	// Name of the release (the Minimart's name), in the Minimart's namespace.
	Name string `json:"name"`
	// Revision of the release.
	Revision int `json:"revision"`
	// ChartVersion is the version of the chart the release was made from.
	ChartVersion string `json:"chartVersion"`
}

// MinimartStatus is what the operator observed of a Minimart's release.
type MinimartStatus struct {
	// ObservedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// DeployedRelease is the release deployed for the spec, when there is one.
	// +optional
	DeployedRelease *DeployedRelease `json:"deployedRelease,omitempty"`
	// ReadyReplicas of the release's Deployment.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// Conditions: Ready, Progressing, Degraded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Minimart is a release of the minimart Helm chart: the operator installs it with Helm
// (`helm list` shows it), upgrades it when the spec changes, restores what drifts and
// uninstalls it when the Minimart is deleted.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mm,categories=quintet
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 53",message="metadata.name must be at most 53 characters: it is the Helm release's name"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Revision",type=integer,JSONPath=`.status.deployedRelease.revision`
// +kubebuilder:printcolumn:name="Chart",type=string,JSONPath=`.status.deployedRelease.chartVersion`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.status.readyReplicas`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Minimart struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:default={}
	// +optional
	Spec MinimartSpec `json:"spec,omitempty"`
	// +optional
	Status MinimartStatus `json:"status,omitempty"`
}

// GetConditions returns the Minimart's conditions.
func (m *Minimart) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions replaces the Minimart's conditions.
func (m *Minimart) SetConditions(c []metav1.Condition) { m.Status.Conditions = c }

// +kubebuilder:object:root=true

// MinimartList is a list of Minimarts.
type MinimartList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Minimart `json:"items"`
}
