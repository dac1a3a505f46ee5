package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RuntimeVersionSpec is a model's inference service, as KRE's KRT manifest declares it: an
// entrypoint, nodes, and workflows that chain nodes through NATS subjects.
// +kubebuilder:validation:XValidation:rule="!has(self.workflows) || self.workflows.all(w, w.sequential.all(n, has(self.nodes) && self.nodes.exists(x, x.name == n)))",message="every name in a workflow's sequential must be a declared node",fieldPath=".workflows"
// +kubebuilder:validation:XValidation:rule="!has(self.workflows) || self.workflows.all(a, self.workflows.exists_one(b, b.entrypoint == a.entrypoint))",message="each workflow needs its own entrypoint name",fieldPath=".workflows"
// +kubebuilder:validation:XValidation:rule="!has(self.nodes) || self.nodes.all(n, has(self.workflows) && self.workflows.exists_one(w, n.name in w.sequential))",message="every node must be in exactly one workflow",fieldPath=".nodes"
type RuntimeVersionSpec struct {
	// runtimeRef names the Runtime, in the same namespace, whose NATS, MongoDB and MinIO
	// this version uses.
	// +required
	RuntimeRef RuntimeReference `json:"runtimeRef"`

	// entrypoint receives requests (HTTP `POST /predict`) and hands them to the workflows.
	// +required
	Entrypoint VersionEntrypoint `json:"entrypoint"`

	// config is passed to every node and the entrypoint as environment variables.
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Config []ConfigEntry `json:"config,omitempty"`

	// nodes are the steps of the workflows, one Deployment each.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +required
	Nodes []Node `json:"nodes"`

	// workflows chain nodes: a request to a workflow's entrypoint goes through its
	// sequential nodes in order, and the last one answers.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +required
	Workflows []Workflow `json:"workflows"`

	// placement of the entrypoint's and the nodes' pods on nodes.
	// +optional
	Placement Placement `json:"placement,omitzero"`

	// state: Started runs the version; Stopped scales everything to zero and keeps it.
	// +kubebuilder:validation:Enum=Started;Stopped
	// +kubebuilder:default=Started
	// +optional
	State VersionState `json:"state,omitempty"`
}

// VersionState says whether a RuntimeVersion runs.
type VersionState string

// The states of a RuntimeVersion.
const (
	StateStarted VersionState = "Started"
	StateStopped VersionState = "Stopped"
)

// RuntimeReference names a Runtime in the RuntimeVersion's namespace.
type RuntimeReference struct {
	// name of the Runtime.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// VersionEntrypoint is the entrypoint of a RuntimeVersion.
type VersionEntrypoint struct {
	// image of the entrypoint, with a tag (`name:tag` as the last path element) or a digest.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^([^\\\\s/]+/)*[^\\\\s/:@]+:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$') || self.matches('^[^\\\\s@]+@sha256:[a-f0-9]{64}$')",message="image must carry a tag or a digest"
	// +required
	Image string `json:"image"`

	// proto is the protobuf file describing the entrypoint's messages, as in KRT.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Proto string `json:"proto,omitempty"`
}

// ConfigEntry is one configuration value, inline or from a Secret.
// +kubebuilder:validation:XValidation:rule="has(self.value) != has(self.secretKeyRef)",message="set exactly one of value and secretKeyRef"
type ConfigEntry struct {
	// key is the environment variable's name.
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`
	// +kubebuilder:validation:MaxLength=128
	// +required
	Key string `json:"key"`

	// value, inline.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Value *string `json:"value,omitempty"`

	// secretKeyRef reads the value from a key of a Secret in the namespace.
	// +optional
	SecretKeyRef *corev1.SecretKeySelector `json:"secretKeyRef,omitempty"`
}

// Node is one step of a workflow.
type Node struct {
	// name of the node, unique in the version (a DNS label), and not entrypoint: that is the
	// name of the entrypoint's Deployment and Service (<version>-entrypoint).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="self != 'entrypoint'",message="entrypoint is the entrypoint's own name: call the node something else"
	// +required
	Name string `json:"name"`

	// image of the node, with a tag or digest.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^([^\\\\s/]+/)*[^\\\\s/:@]+:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$') || self.matches('^[^\\\\s@]+@sha256:[a-f0-9]{64}$')",message="image must carry a tag or a digest"
	// +required
	Image string `json:"image"`

	// src is the node's source file in the KRT, passed as KRT_NODE_SRC.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Src string `json:"src,omitempty"`

	// gpu asks for one nvidia.com/gpu per replica.
	// +optional
	GPU bool `json:"gpu,omitempty"`

	// replicas of the node while the version is Started.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=1
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// readinessProbe of the node's container, when its image can tell: a node that is Ready
	// takes messages (krt-runner: `httpGet` of /healthz on port 8080, ready once subscribed).
	// Without one, a node is Ready once it runs.
	// +kubebuilder:validation:XValidation:rule="(!has(self.httpGet) || !has(self.httpGet.host) || self.httpGet.host == '') && (!has(self.tcpSocket) || !has(self.tcpSocket.host) || self.tcpSocket.host == '')",message="readinessProbe must not set a host: the kubelet would connect from the node to wherever it names; it probes the pod's own address without one"
	// +optional
	ReadinessProbe *corev1.Probe `json:"readinessProbe,omitempty"`
}

// Workflow chains nodes behind an entrypoint name.
type Workflow struct {
	// name of the workflow (a DNS label).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Name string `json:"name"`

	// entrypoint is the name requests use to reach this workflow (`POST /predict?workflow=`).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Entrypoint string `json:"entrypoint"`

	// sequential are the workflow's nodes, in the order a message goes through them.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=40
	// +required
	Sequential []string `json:"sequential"`
}

// NodeStatus is the observed state of a node's Deployment.
type NodeStatus struct {
	// name of the node.
	Name string `json:"name"`
	// replicas desired now (0 while Stopped).
	Replicas int32 `json:"replicas"`
	// readyReplicas of its Deployment.
	ReadyReplicas int32 `json:"readyReplicas"`
}

// WorkflowStatus says which NATS subjects a workflow uses.
type WorkflowStatus struct {
	// name of the workflow.
	Name string `json:"name"`
	// subjects, in order: the input subject of each sequential node.
	// +listType=atomic
	Subjects []string `json:"subjects"`
}

// RuntimeVersionStatus is the observed state of a RuntimeVersion.
type RuntimeVersionStatus struct {
	// observedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// entrypoint is the state of the entrypoint's Deployment.
	// +optional
	Entrypoint NodeStatus `json:"entrypoint,omitzero"`

	// nodes are the states of the nodes' Deployments.
	// +listType=map
	// +listMapKey=name
	// +optional
	Nodes []NodeStatus `json:"nodes,omitempty"`

	// workflows are the subjects of each workflow.
	// +listType=map
	// +listMapKey=name
	// +optional
	Workflows []WorkflowStatus `json:"workflows,omitempty"`

	// conditions: Ready, Progressing, Degraded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// RuntimeVersion runs a model's workflows on a Runtime: an entrypoint Deployment and Service,
// and one Deployment per node, chained through the Runtime's NATS.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=rv,categories=quintet
// +kubebuilder:printcolumn:name="Runtime",type=string,JSONPath=`.spec.runtimeRef.name`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.spec.state`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RuntimeVersion struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired version.
	// +required
	Spec RuntimeVersionSpec `json:"spec"`

	// status is the observed state.
	// +optional
	Status RuntimeVersionStatus `json:"status,omitempty"`
}

// RuntimeVersionList is a list of RuntimeVersions.
// +kubebuilder:object:root=true
type RuntimeVersionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RuntimeVersion `json:"items"`
}

// GetConditions returns the status conditions.
func (v *RuntimeVersion) GetConditions() []metav1.Condition { return v.Status.Conditions }

// SetConditions replaces the status conditions.
func (v *RuntimeVersion) SetConditions(c []metav1.Condition) { v.Status.Conditions = c }
