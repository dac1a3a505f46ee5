package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// RestoreSource is a snapshot a new cluster starts from: an etcd snapshot such as an
// EtcdBackup writes (or `etcdctl snapshot save`), with etcd's SHA-256 at its end.
// +kubebuilder:validation:XValidation:rule="self.backupStorageType != 'S3' || has(self.s3)",message="backupStorageType S3 needs the s3 section: path, awsSecret and (for a store other than AWS) endpoint"
// +kubebuilder:validation:XValidation:rule="self.backupStorageType != 'PersistentVolumeClaim' || has(self.persistentVolumeClaim)",message="backupStorageType PersistentVolumeClaim needs the persistentVolumeClaim section: claimName and path"
type RestoreSource struct {
	// backupStorageType is where the snapshot is: S3, an S3-compatible object store, or
	// PersistentVolumeClaim, a file on a volume.
	// +required
	BackupStorageType BackupStorageType `json:"backupStorageType"`

	// s3 is the object, with backupStorageType S3: path is "<bucket>/<key>" of the
	// snapshot itself (an EtcdBackup's status.lastBackup.path).
	// +optional
	S3 *S3BackupSource `json:"s3,omitempty"`

	// persistentVolumeClaim is the file, with backupStorageType PersistentVolumeClaim: path
	// in the claim's volume (an EtcdBackup's status.lastBackup.path without the claim's
	// name). Members never mount it: before the first member starts, a Job mounts it
	// read-only, with that member's volume, and restores there.
	// +optional
	PersistentVolumeClaim *PVCBackupSource `json:"persistentVolumeClaim,omitempty"`

	// sha256 the database must have, in hexadecimal (an EtcdBackup's
	// status.lastBackup.sha256): a snapshot whose hash differs is refused. Unset, the
	// snapshot must only match the SHA-256 etcd wrote at its end.
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9a-f]{64}$')",message="sha256 is 64 lowercase hexadecimal digits"
	// +optional
	SHA256 string `json:"sha256,omitempty"`

	// revisionBump raises the restored revision by this much and marks the revisions
	// before it compacted (etcdutl snapshot restore --bump-revision --mark-compacted), so
	// watchers that saw a later revision than the snapshot's (a kube-apiserver) never see
	// revisions go back: they are told to list again. No bump when unset.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000000000
	// +optional
	RevisionBump int64 `json:"revisionBump,omitempty"`
}

// Location names the snapshot: <bucket>/<key> in S3, or <claim>/<path> on a volume.
func (s *RestoreSource) Location() string {
	if s.BackupStorageType == BackupStorageTypePVC && s.PersistentVolumeClaim != nil {
		return s.PersistentVolumeClaim.ClaimName + "/" + s.PersistentVolumeClaim.Path
	}
	if s.S3 != nil {
		return s.S3.Path
	}
	return ""
}

// EtcdClusterRef names an EtcdCluster in the same namespace.
type EtcdClusterRef struct {
	// name of the EtcdCluster.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Name string `json:"name"`
}

// EtcdRestoreSpec is the cluster to make and the snapshot it starts from. etcdCluster,
// backupStorageType and s3 are the CoreOS etcd operator's fields, so its manifests work
// unchanged.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="an EtcdRestore is one restore and cannot change: delete it (the cluster it made stays) and make another"
// (RestoreSource's rules, inlined, apply here too.)
// +kubebuilder:validation:XValidation:rule="!has(self.clusterSpec) || !has(self.clusterSpec.restore)",message="clusterSpec.restore is set by the EtcdRestore from its own fields: leave it out"
type EtcdRestoreSpec struct {
	// etcdCluster is the EtcdCluster to make. It must not exist: a restore never
	// overwrites a cluster.
	// +required
	EtcdCluster EtcdClusterRef `json:"etcdCluster"`

	RestoreSource `json:",inline"`

	// clusterSpec of the EtcdCluster made (size, version, pod policy, TLS); a cluster of 3
	// of the default version when unset.
	// +optional
	ClusterSpec *EtcdClusterSpec `json:"clusterSpec,omitempty"`
}

// EtcdRestoreStatus is how the restore went. succeeded and reason are the CoreOS operator's.
type EtcdRestoreStatus struct {
	// observedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// succeeded is true once the cluster serves the snapshot's data.
	// +optional
	Succeeded bool `json:"succeeded"`
	// reason the restore has not succeeded.
	// +optional
	Reason string `json:"reason,omitempty"`
	// clusterUID is the UID of the EtcdCluster this restore made: it is made once, never
	// again once deleted.
	// +optional
	ClusterUID types.UID `json:"clusterUID,omitempty"`
	// conditions: Ready, Progressing, Degraded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// EtcdRestore makes a new EtcdCluster whose data come from a snapshot: its first member
// is restored from the snapshot (etcdutl snapshot restore), the others join it as
// learners and copy it. The cluster stays when the EtcdRestore is deleted.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=quintet
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.etcdCluster.name`
// +kubebuilder:printcolumn:name="Succeeded",type=boolean,JSONPath=`.status.succeeded`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type EtcdRestore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the cluster to make and its snapshot.
	// +required
	Spec EtcdRestoreSpec `json:"spec"`

	// status is how the restore went.
	// +optional
	Status EtcdRestoreStatus `json:"status,omitempty"`
}

// EtcdRestoreList is a list of EtcdRestores.
// +kubebuilder:object:root=true
type EtcdRestoreList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EtcdRestore `json:"items"`
}

// GetConditions returns the status conditions.
func (r *EtcdRestore) GetConditions() []metav1.Condition { return r.Status.Conditions }

// SetConditions replaces the status conditions.
func (r *EtcdRestore) SetConditions(conds []metav1.Condition) { r.Status.Conditions = conds }

// RestoredCondition of an EtcdCluster with spec.restore: True once its first member,
// restored from the snapshot, serves; False while the snapshot is checked or cannot be
// used (the reason says why: CredentialsInvalid, StoreFailed, SnapshotNotFound,
// SnapshotCorrupt) and the first member waits.
const RestoredCondition = "Restored"

// Condition reasons of restores, besides the backups' (CredentialsInvalid, StoreFailed,
// SnapshotCorrupt) and the shared ones.
const (
	// ReasonRestoring: the snapshot was checked; the first member restores it and starts.
	ReasonRestoring = "Restoring"
	// ReasonRestored: the cluster serves the snapshot's data.
	ReasonRestored = "Restored"
	// ReasonSnapshotNotFound: the store has no object at the path.
	ReasonSnapshotNotFound = "SnapshotNotFound"
	// ReasonClusterExists: the EtcdCluster an EtcdRestore names exists and was not made by
	// it; nothing is changed.
	ReasonClusterExists = "ClusterExists"
	// ReasonClusterDeleted: the EtcdCluster an EtcdRestore made is gone.
	ReasonClusterDeleted = "ClusterDeleted"
)

// RestoredByLabel on an EtcdCluster names the EtcdRestore that made it.
const RestoredByLabel = "etcd.database.coreos.com/restored-by"
