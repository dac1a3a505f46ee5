package v1alpha

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults beyond the seed's sample: the example's own images and names.
const (
	DefaultDevicePluginImage = "quay.io/chrisp262/pt-device-plugin:latest"
	DefaultModuleImage       = "quay.io/chrisp262/pt-char-dev:${KERNEL_FULL_VERSION}"
	DefaultKernelRegexp      = "^.+$"
	DefaultModuleName        = "ptemplate_char_dev"
	DefaultResourceName      = "example.com/ptemplate"
)

// PtemplateSpec is a character-device kernel module loaded by KMM on the selected nodes, its
// device plugin, and consumer pods that each get requiredDevices of its devices. Field names
// follow the ptemplate-operator example, so its sample applies unchanged.
// +kubebuilder:validation:XValidation:rule="self.requiredDevices <= self.maxdev",message="requiredDevices cannot exceed maxdev: a node has maxdev devices",fieldPath=".requiredDevices"
type PtemplateSpec struct {
	// maxdev is how many devices the kernel module makes on each node (its max_dev parameter).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	// +kubebuilder:default=1
	// +optional
	MaxDev int32 `json:"maxdev,omitempty"` //nolint:kubeapilinter // the example's field name, kept for its sample

	// defaultmsg is what the devices answer until written to (the module's default_msg
	// parameter): letters, digits and . _ : / + - only, since it is passed to modprobe.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9._:/+-]+$')",message="defaultmsg is a kernel module parameter: letters, digits and . _ : / + - only (no spaces or quotes)"
	// +kubebuilder:default=ptemplate
	// +optional
	DefaultMsg string `json:"defaultmsg,omitempty"` //nolint:kubeapilinter // the example's field name, kept for its sample

	// consumerimage is the image of the consumer pods, with a tag or digest.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^([^\\\\s/]+/)*[^\\\\s/:@]+:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$') || self.matches('^[^\\\\s@]+@sha256:[a-f0-9]{64}$')",message="consumerimage must carry a tag or a digest"
	// +required
	ConsumerImage string `json:"consumerimage"` //nolint:kubeapilinter // the example's field name, kept for its sample

	// requiredDevices each consumer pod asks for (a limit of the extended resource).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=1
	// +optional
	RequiredDevices int32 `json:"requiredDevices,omitempty"`

	// imageRepoSecret is the pull Secret of the module, device plugin and consumer images.
	// +optional
	ImageRepoSecret *corev1.LocalObjectReference `json:"imageRepoSecret,omitempty"`

	// selector: the nodes where KMM loads the module and consumers may run.
	// +kubebuilder:validation:XValidation:rule="size(self) > 0",message="selector must name at least one node label: the module is loaded only on matching nodes"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'))",message="selector keys must be label keys: a name of at most 63 letters, digits, '-', '_' and '.', alphanumeric at both ends, after an optional DNS prefix and '/'"
	// +kubebuilder:validation:XValidation:rule="self.all(k, self[k].matches('^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$'))",message="selector values must be label values: at most 63 letters, digits, '-', '_' and '.', alphanumeric at both ends"
	// +kubebuilder:validation:MaxProperties=16
	// +required
	Selector map[string]LabelValue `json:"selector"`

	// tolerations of the consumer pods: device nodes are often tainted to keep other pods off.
	// The DaemonSet's pods tolerate a node not ready, unreachable or cordoned without them.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// devicePluginImage is the image of the device plugin KMM runs beside the module, with a
	// tag or digest.
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^([^\\\\s/]+/)*[^\\\\s/:@]+:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$') || self.matches('^[^\\\\s@]+@sha256:[a-f0-9]{64}$')",message="devicePluginImage must carry a tag or a digest"
	// +kubebuilder:default="quay.io/chrisp262/pt-device-plugin:latest"
	// +optional
	DevicePluginImage string `json:"devicePluginImage,omitempty"`

	// kernelModule is the module KMM loads.
	// +kubebuilder:default={}
	// +optional
	KernelModule KernelModule `json:"kernelModule,omitzero"`

	// resourceName is the extended resource the device plugin advertises and consumers ask for.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')",message="resourceName must be an extended resource name: <domain>/<name>"
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('kubernetes.io/') && !self.contains('.kubernetes.io/')",message="resourceName must not be in the kubernetes.io domain"
	// +kubebuilder:default="example.com/ptemplate"
	// +optional
	ResourceName string `json:"resourceName,omitempty"`
}

// The bound of 63 is the API server's own for a label value; it also keeps the selector's
// CEL rule within its cost budget, which an unbounded string exceeds.

// LabelValue is the value of a node label: at most 63 characters.
// +kubebuilder:validation:MaxLength=63
type LabelValue string

// KernelModule is the kernel module KMM loads: one kernel mapping (a regular expression of
// kernel versions and the image holding the module built for them).
type KernelModule struct {
	// name of the module, as modprobe loads it.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-]+$`
	// +kubebuilder:default=ptemplate_char_dev
	// +optional
	Name string `json:"name,omitempty"`

	// image holding the module, with a tag or digest; `${KERNEL_FULL_VERSION}` in the tag is
	// the node's kernel version (KMM substitutes it).
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^([^\\\\s/]+/)*[^\\\\s/:@]+:[A-Za-z0-9_${}][A-Za-z0-9_.${}-]{0,127}$') || self.matches('^[^\\\\s@]+@sha256:[a-f0-9]{64}$')",message="kernelModule.image must carry a tag (it may use ${KERNEL_FULL_VERSION}) or a digest"
	// +kubebuilder:default="quay.io/chrisp262/pt-char-dev:${KERNEL_FULL_VERSION}"
	// +optional
	Image string `json:"image,omitempty"`

	// kernelRegexp matches the kernel versions the image serves.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:default="^.+$"
	// +optional
	KernelRegexp string `json:"kernelRegexp,omitempty"`
}

// PtemplateStatus is the observed state of a Ptemplate.
type PtemplateStatus struct {
	// observedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// consumers are the names of the consumer pods, as the example reports them.
	// +listType=atomic
	// +optional
	Consumers []string `json:"consumers,omitempty"`

	// readyConsumers is how many consumer pods are ready.
	// +optional
	ReadyConsumers int32 `json:"readyConsumers"`

	// nodes are the nodes where KMM reports the module loaded (its readiness label).
	// +listType=atomic
	// +optional
	Nodes []string `json:"nodes,omitempty"`

	// conditions: Ready, Progressing, Degraded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Ptemplate loads a character-device kernel module through a KMM Module and runs consumer
// pods that get its devices through the device plugin.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=pt,categories=quintet
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Consumers",type=integer,JSONPath=`.status.readyConsumers`
// +kubebuilder:printcolumn:name="Devices",type=integer,JSONPath=`.spec.requiredDevices`,priority=1
// +kubebuilder:printcolumn:name="Maxdev",type=integer,JSONPath=`.spec.maxdev`,priority=1
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 40",message="metadata.name is at most 40 characters: KMM labels nodes kmm.node.kubernetes.io/<namespace>.<name>.ready, whose name part is at most 63"
type Ptemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired module, device plugin and consumers.
	// +required
	Spec PtemplateSpec `json:"spec"`

	// status is what the operator observed.
	// +optional
	Status PtemplateStatus `json:"status,omitempty"`
}

// PtemplateList is a list of Ptemplates.
// +kubebuilder:object:root=true
type PtemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Ptemplate `json:"items"`
}

// GetConditions returns the status conditions (conditions.Getter).
func (p *Ptemplate) GetConditions() []metav1.Condition { return p.Status.Conditions }

// SetConditions replaces the status conditions (conditions.Setter).
func (p *Ptemplate) SetConditions(c []metav1.Condition) { p.Status.Conditions = c }
