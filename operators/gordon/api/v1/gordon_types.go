package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
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

	// env of the gordon container, after the cluster's proxy variables.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`

	// readinessProbe of the gordon container: a pod counts as available only while it passes.
	// +kubebuilder:validation:XValidation:rule="(!has(self.httpGet) || !has(self.httpGet.host) || self.httpGet.host == '') && (!has(self.tcpSocket) || !has(self.tcpSocket.host) || self.tcpSocket.host == '')",message="readinessProbe must not set a host: the kubelet would connect from the node to wherever it names; it probes the pod's own address without one"
	// +optional
	ReadinessProbe *corev1.Probe `json:"readinessProbe,omitempty"`

	// livenessProbe of the gordon container: the kubelet restarts the container when it fails.
	// +kubebuilder:validation:XValidation:rule="(!has(self.httpGet) || !has(self.httpGet.host) || self.httpGet.host == '') && (!has(self.tcpSocket) || !has(self.tcpSocket.host) || self.tcpSocket.host == '')",message="livenessProbe must not set a host: the kubelet would connect from the node to wherever it names; it probes the pod's own address without one"
	// +optional
	LivenessProbe *corev1.Probe `json:"livenessProbe,omitempty"`

	// startupProbe of the gordon container: the other probes wait until it passes.
	// +kubebuilder:validation:XValidation:rule="(!has(self.httpGet) || !has(self.httpGet.host) || self.httpGet.host == '') && (!has(self.tcpSocket) || !has(self.tcpSocket.host) || self.tcpSocket.host == '')",message="startupProbe must not set a host: the kubelet would connect from the node to wherever it names; it probes the pod's own address without one"
	// +optional
	StartupProbe *corev1.Probe `json:"startupProbe,omitempty"`

	// securityContext of the gordon container. Its unset fields keep the defaults that meet the
	// restricted Pod Security level (non-root user 65532, no privilege escalation, all
	// capabilities dropped); settings that break that level are refused.
	// +kubebuilder:validation:XValidation:rule="!has(self.privileged) || !self.privileged",message="privileged containers break the restricted Pod Security level"
	// +kubebuilder:validation:XValidation:rule="!has(self.allowPrivilegeEscalation) || !self.allowPrivilegeEscalation",message="allowPrivilegeEscalation must be false under the restricted Pod Security level"
	// +kubebuilder:validation:XValidation:rule="!has(self.runAsNonRoot) || self.runAsNonRoot",message="runAsNonRoot must not be false under the restricted Pod Security level"
	// +kubebuilder:validation:XValidation:rule="!has(self.runAsUser) || self.runAsUser != 0",message="runAsUser must not be 0 (root) under the restricted Pod Security level"
	// +kubebuilder:validation:XValidation:rule="!has(self.capabilities) || !has(self.capabilities.add) || self.capabilities.add.all(c, c == 'NET_BIND_SERVICE')",message="only NET_BIND_SERVICE may be added under the restricted Pod Security level"
	// +kubebuilder:validation:XValidation:rule="!has(self.seccompProfile) || self.seccompProfile.type != 'Unconfined'",message="seccompProfile Unconfined breaks the restricted Pod Security level"
	// +kubebuilder:validation:XValidation:rule="!has(self.appArmorProfile) || self.appArmorProfile.type != 'Unconfined'",message="appArmorProfile Unconfined breaks the restricted Pod Security level"
	// +kubebuilder:validation:XValidation:rule="!has(self.seLinuxOptions) || ((!has(self.seLinuxOptions.user) || self.seLinuxOptions.user == '') && (!has(self.seLinuxOptions.role) || self.seLinuxOptions.role == '') && (!has(self.seLinuxOptions.type) || self.seLinuxOptions.type in ['', 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t']))",message="seLinuxOptions may set only level and a container type (container_t, container_init_t, container_kvm_t, container_engine_t) under the restricted Pod Security level"
	// +kubebuilder:validation:XValidation:rule="!has(self.procMount) || self.procMount == 'Default'",message="procMount Unmasked breaks the restricted Pod Security level"
	// +kubebuilder:validation:XValidation:rule="!has(self.windowsOptions) || !has(self.windowsOptions.hostProcess) || !self.windowsOptions.hostProcess",message="windowsOptions.hostProcess breaks the restricted Pod Security level"
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`

	// nodeSelector for the pods.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations of the pods.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// rollingUpdate bounds how a changed pod template replaces the running pods, as a
	// Deployment's RollingUpdate strategy does.
	// +kubebuilder:default={}
	// +optional
	RollingUpdate *RollingUpdate `json:"rollingUpdate,omitempty"`
}

// RollingUpdate bounds a rollout of a changed pod template. maxSurge 0 with maxUnavailable
// 100% replaces every pod at once.
// +kubebuilder:validation:XValidation:rule="!(has(self.maxSurge) && has(self.maxUnavailable) && string(self.maxSurge) in ['0', '0%'] && string(self.maxUnavailable) in ['0', '0%'])",message="maxSurge and maxUnavailable must not both be 0: the rollout could never start"
type RollingUpdate struct {
	// maxUnavailable is how many of the desired pods may be unavailable (not Ready) during a
	// rollout: a number or a percentage of replicas, rounded down.
	// +kubebuilder:default="25%"
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",message="maxUnavailable must be a non-negative number or a percentage from 0% to 100%"
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// maxSurge is how many pods beyond replicas may exist during a rollout: a number or a
	// percentage of replicas, rounded up.
	// +kubebuilder:default="25%"
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",message="maxSurge must be a non-negative number or a percentage from 0% to 100%"
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`
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

	// updatedReplicas is the number of those pods that run the current pod template.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas"`

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
// terminated, rolls them to a changed pod template, and reports which pods belong to it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.gordon.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=gn,categories=quintet
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.gordon.replicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Up-to-date",type=integer,JSONPath=`.status.updatedReplicas`
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
