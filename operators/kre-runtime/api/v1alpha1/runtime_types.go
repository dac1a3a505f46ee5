package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Default images of the components: the upstream images, pinned.
const (
	DefaultMongoImage = "docker.io/library/mongo:8.0.4"
	DefaultNATSImage  = "docker.io/library/nats:2.15.2"
	DefaultMinIOImage = "quay.io/minio/minio:RELEASE.2024-12-18T13-15-44Z"
	// DefaultBucket is spec.minio.bucket when the Runtime names none.
	DefaultBucket = "kre"
)

// RuntimeSpec is the infrastructure of a KRE runtime. Field names follow KRE's own Runtime
// (`nats_streaming` included), so KRE's samples apply unchanged; every field has a default.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.volumeRetention) || has(self.volumeRetention)",message="volumeRetention cannot be unset once set"
type RuntimeSpec struct {
	// entrypoint is where the started RuntimeVersion's entrypoint is published.
	// +kubebuilder:default={}
	// +optional
	Entrypoint RuntimeEntrypoint `json:"entrypoint,omitempty"`

	// nats_streaming is the messaging between the nodes of a workflow. It keeps KRE's name
	// but runs NATS with JetStream, the maintained successor of NATS Streaming.
	// +kubebuilder:default={}
	// +optional
	NATSStreaming NATSSpec `json:"nats_streaming,omitempty"` //nolint:kubeapilinter // KRE's field name, kept for its samples

	// mongo is the runtime's document database.
	// +kubebuilder:default={}
	// +optional
	Mongo MongoSpec `json:"mongo,omitempty"`

	// minio is the runtime's object store.
	// +kubebuilder:default={}
	// +optional
	MinIO MinIOSpec `json:"minio,omitempty"`

	// volumeRetention says what happens to the components' volume claims when the Runtime is
	// deleted: Retain keeps them (as StatefulSets do by default) with the credentials the
	// operator generated for their data, so that a Runtime made again with the same name
	// serves the same data; Delete removes both.
	// +kubebuilder:validation:Enum=Retain;Delete
	// +kubebuilder:default=Retain
	// +optional
	VolumeRetention VolumeRetention `json:"volumeRetention,omitempty"`
}

// VolumeRetention is what happens to volume claims when their Runtime is deleted.
type VolumeRetention string

// The volume retention policies.
const (
	VolumeRetain VolumeRetention = "Retain"
	VolumeDelete VolumeRetention = "Delete"
)

// RuntimeEntrypoint publishes the started RuntimeVersion's entrypoint through an Ingress.
type RuntimeEntrypoint struct {
	// host is the Ingress host of the entrypoint.
	// +kubebuilder:default="runtime.local"
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	Host string `json:"host,omitempty"`

	// ingressClassName of the Ingress; the cluster's default class when unset.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	IngressClassName *string `json:"ingressClassName,omitempty"`
}

// Placement chooses the nodes pods run on.
type Placement struct {
	// nodeSelector: the pods run only on nodes with these labels.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations let the pods run on nodes with matching taints.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// Storage is the volume of each replica of a component. It cannot change after creation:
// a StatefulSet's volume claim templates are fixed.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="storage cannot change after creation: a StatefulSet's volume claims are fixed (delete the Runtime, keeping its volumes, to change it)"
type Storage struct {
	// className is the StorageClass of the volumes; the cluster's default when unset.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ClassName string `json:"className,omitempty"`

	// size of each volume, at least 256Mi: a smaller one fills before its server serves
	// (MongoDB's journal alone may take 100Mi).
	// +kubebuilder:default="1Gi"
	// +kubebuilder:validation:XValidation:rule="quantity(self).compareTo(quantity('256Mi')) >= 0",message="size must be at least 256Mi: a smaller volume fills before its server serves"
	// +optional
	Size resource.Quantity `json:"size,omitzero"`
}

// NATSSpec runs NATS with JetStream.
type NATSSpec struct {
	// replicas of the NATS cluster.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5
	// +kubebuilder:default=1
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// image of the NATS server.
	// +kubebuilder:default="docker.io/library/nats:2.15.2"
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="!self.contains(' ')",message="image must not contain spaces"
	// +optional
	Image string `json:"image,omitempty"`

	// storage of JetStream, per replica.
	// +kubebuilder:default={}
	// +optional
	Storage Storage `json:"storage,omitempty"`

	// placement of the pods on nodes.
	// +optional
	Placement Placement `json:"placement,omitzero"`
}

// MongoSpec runs MongoDB.
type MongoSpec struct {
	// replicas of MongoDB: 1 (replica sets are not supported yet).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:XValidation:rule="self <= 1",message="mongo.replicas must be 1: MongoDB replica sets are not supported yet"
	// +kubebuilder:default=1
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// image of MongoDB.
	// +kubebuilder:default="docker.io/library/mongo:8.0.4"
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="!self.contains(' ')",message="image must not contain spaces"
	// +optional
	Image string `json:"image,omitempty"`

	// credentials of MongoDB's root user.
	// +optional
	Credentials MongoCredentials `json:"credentials,omitempty"`

	// storage of the database.
	// +kubebuilder:default={}
	// +optional
	Storage Storage `json:"storage,omitempty"`

	// placement of the pods on nodes.
	// +optional
	Placement Placement `json:"placement,omitzero"`
}

// MongoCredentials are the root user's. Prefer secretRef: inline values are readable by
// anyone who can read the Runtime. With neither, the operator generates them.
// +kubebuilder:validation:XValidation:rule="!(has(self.secretRef) && (has(self.username) || has(self.password)))",message="set either secretRef or username and password, not both"
// +kubebuilder:validation:XValidation:rule="has(self.username) == has(self.password)",message="username and password go together"
type MongoCredentials struct {
	// username, inline (KRE's form, kept for compatibility).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Username string `json:"username,omitempty"`

	// password, inline (KRE's form, kept for compatibility).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Password string `json:"password,omitempty"` //nolint:gosec // KRE's inline form; the operator flags it

	// secretRef names a Secret in the Runtime's namespace with keys `username` and `password`.
	// +optional
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty"`
}

// MinIOSpec runs MinIO.
type MinIOSpec struct {
	// image of MinIO.
	// +kubebuilder:default="quay.io/minio/minio:RELEASE.2024-12-18T13-15-44Z"
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="!self.contains(' ')",message="image must not contain spaces"
	// +optional
	Image string `json:"image,omitempty"`

	// credentials of MinIO's root user.
	// +optional
	Credentials MinIOCredentials `json:"credentials,omitempty"`

	// bucket the versions' nodes keep their objects in (KRT_MINIO_BUCKET); they create it when
	// it does not exist.
	// +kubebuilder:default=kre
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9.-]*[a-z0-9]$`
	// +optional
	Bucket string `json:"bucket,omitempty"`

	// storage of the object store.
	// +kubebuilder:default={}
	// +optional
	Storage Storage `json:"storage,omitempty"`

	// placement of the pods on nodes.
	// +optional
	Placement Placement `json:"placement,omitzero"`
}

// MinIOCredentials are the root user's. Prefer secretRef: inline values are readable by
// anyone who can read the Runtime. With neither, the operator generates them.
// +kubebuilder:validation:XValidation:rule="!(has(self.secretRef) && (has(self.accessKey) || has(self.secretKey)))",message="set either secretRef or accessKey and secretKey, not both"
// +kubebuilder:validation:XValidation:rule="has(self.accessKey) == has(self.secretKey)",message="accessKey and secretKey go together"
type MinIOCredentials struct {
	// accessKey, inline (KRE's form, kept for compatibility). MinIO needs at least 3 characters.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=128
	// +optional
	AccessKey string `json:"accessKey,omitempty"`

	// secretKey, inline (KRE's form, kept for compatibility). MinIO needs at least 8 characters.
	// +kubebuilder:validation:MinLength=8
	// +kubebuilder:validation:MaxLength=256
	// +optional
	SecretKey string `json:"secretKey,omitempty"` //nolint:gosec // KRE's inline form; the operator flags it

	// secretRef names a Secret in the Runtime's namespace with keys `accessKey` and `secretKey`.
	// +optional
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty"`
}

// ComponentStatus is the observed state of one component.
type ComponentStatus struct {
	// replicas desired.
	// +optional
	Replicas int32 `json:"replicas"`

	// readyReplicas of the component's StatefulSet: replicas whose server answers its
	// readiness probe (a ping of MongoDB, NATS's and MinIO's health endpoints).
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// ready is true when every replica is ready. A RuntimeVersion starts once every server of
	// its Runtime is.
	// +optional
	Ready bool `json:"ready"`

	// endpoint is where clients reach the component, as a URL: `mongodb://`, `nats://` or
	// `http://` (MinIO's S3 API) and the client Service's name and port.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// service is the component's client Service, `<service>.<namespace>.svc`.
	// +optional
	Service string `json:"service,omitempty"`

	// credentialsSecret is the Secret the component's credentials are read from (its name
	// only: contents never appear in status).
	// +optional
	CredentialsSecret string `json:"credentialsSecret,omitempty"`
}

// RuntimeStatus is the observed state of a Runtime.
type RuntimeStatus struct {
	// observedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// nats_streaming is the state of NATS.
	// +optional
	NATSStreaming ComponentStatus `json:"nats_streaming,omitzero"` //nolint:kubeapilinter // matches the spec's field

	// mongo is the state of MongoDB.
	// +optional
	Mongo ComponentStatus `json:"mongo,omitzero"`

	// minio is the state of MinIO.
	// +optional
	MinIO ComponentStatus `json:"minio,omitzero"`

	// entrypointVersion is the started RuntimeVersion the Ingress routes to.
	// +optional
	EntrypointVersion string `json:"entrypointVersion,omitempty"`

	// conditions: Ready, Progressing, Degraded, InlineCredentials.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Runtime is the infrastructure of a KRE runtime: MongoDB, NATS (JetStream) and MinIO as
// StatefulSets with their Services and volumes, and an Ingress for the started
// RuntimeVersion's entrypoint.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=rt,categories=quintet
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="NATS",type=integer,JSONPath=`.status.nats_streaming.readyReplicas`
// +kubebuilder:printcolumn:name="Mongo",type=integer,JSONPath=`.status.mongo.readyReplicas`
// +kubebuilder:printcolumn:name="MinIO",type=integer,JSONPath=`.status.minio.readyReplicas`
// +kubebuilder:printcolumn:name="Entrypoint",type=string,JSONPath=`.status.entrypointVersion`,priority=1
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Runtime struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired infrastructure.
	// +kubebuilder:default={}
	// +optional
	Spec RuntimeSpec `json:"spec,omitempty"`

	// status is the observed state.
	// +optional
	Status RuntimeStatus `json:"status,omitempty"`
}

// RuntimeList is a list of Runtimes.
// +kubebuilder:object:root=true
type RuntimeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Runtime `json:"items"`
}

// GetConditions returns the status conditions.
func (r *Runtime) GetConditions() []metav1.Condition { return r.Status.Conditions }

// SetConditions replaces the status conditions.
func (r *Runtime) SetConditions(c []metav1.Condition) { r.Status.Conditions = c }
