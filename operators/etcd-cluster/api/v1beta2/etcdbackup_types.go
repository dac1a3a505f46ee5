package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BackupStorageType is where a backup goes.
// +kubebuilder:validation:Enum=S3;PersistentVolumeClaim
type BackupStorageType string

// The backup storage types.
const (
	// BackupStorageTypeS3 is an S3-compatible object store.
	BackupStorageTypeS3 BackupStorageType = "S3"
	// BackupStorageTypePVC is a PersistentVolumeClaim: a Job that mounts it writes the backup.
	BackupStorageTypePVC BackupStorageType = "PersistentVolumeClaim"
)

// EtcdBackupSpec is what to back up, where, and how often. The fields the CoreOS etcd
// operator's EtcdBackup has keep their names and meaning, so its manifests work unchanged.
// +kubebuilder:validation:XValidation:rule="has(self.clusterName) != has(self.etcdEndpoints)",message="set exactly one of clusterName (an EtcdCluster in this namespace) and etcdEndpoints (another cluster's client URLs)"
// +kubebuilder:validation:XValidation:rule="!has(self.clientTLSSecret) || has(self.etcdEndpoints)",message="clientTLSSecret is for etcdEndpoints: with clusterName the operator uses the cluster's own client certificate"
// +kubebuilder:validation:XValidation:rule="self.storageType != 'S3' || has(self.s3)",message="storageType S3 needs the s3 section: path, awsSecret and (for a store other than AWS) endpoint"
// +kubebuilder:validation:XValidation:rule="self.storageType != 'PersistentVolumeClaim' || has(self.persistentVolumeClaim)",message="storageType PersistentVolumeClaim needs the persistentVolumeClaim section: claimName and path"
type EtcdBackupSpec struct {
	// clusterName is an EtcdCluster in this namespace; over TLS, the operator uses the
	// cluster's own client certificate.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	ClusterName string `json:"clusterName,omitempty"`

	// etcdEndpoints are client URLs of the cluster to back up, as in the CoreOS operator.
	// Each must name an EtcdCluster of this namespace (its client Service, such as
	// http://example-client:2379 or http://example-client.<namespace>.svc:2379, or one of
	// its members), and the backup then reaches that cluster as clusterName does; a URL of
	// another namespace or outside the cluster is refused (EndpointNotAllowed) unless the
	// operator lists its host (the manager's --backup-etcd-endpoints).
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=9
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.all(e, e.startsWith('http://') || e.startsWith('https://'))",message="each etcdEndpoints entry is a client URL such as https://etcd-0.etcd.default.svc:2379"
	// +optional
	EtcdEndpoints []string `json:"etcdEndpoints,omitempty"`

	// clientTLSSecret holds the client certificate for https etcdEndpoints, with the
	// CoreOS operator's keys: etcd-client.crt, etcd-client.key and etcd-client-ca.crt.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ClientTLSSecret string `json:"clientTLSSecret,omitempty"`

	// storageType is where backups go: S3, an S3-compatible object store.
	// +required
	StorageType BackupStorageType `json:"storageType"`

	// s3 is the object store, with storageType S3.
	// +optional
	S3 *S3BackupSource `json:"s3,omitempty"`

	// persistentVolumeClaim is the volume, with storageType PersistentVolumeClaim: each
	// backup runs in a Job that mounts it, in the operator's image.
	// +optional
	PersistentVolumeClaim *PVCBackupSource `json:"persistentVolumeClaim,omitempty"`

	// backupPolicy: when, for how long and how many. Without an interval or a schedule the
	// backup is taken once.
	// +optional
	BackupPolicy *BackupPolicy `json:"backupPolicy,omitempty"`

	// verify restores each new backup into a scratch etcd, in a short-lived restricted Job of
	// the operator's image, and compares its keyspace (key count and etcd's HashKV) at the
	// snapshot's revision with the member's, read right after the snapshot. Only a verified
	// backup counts (status, retention); one that differs is deleted and the backup fails with
	// VerificationFailed.
	// +optional
	Verify bool `json:"verify,omitempty"`
}

// S3BackupSource is a place in an S3-compatible object store.
type S3BackupSource struct {
	// path is "<bucket>/<key>". A one-shot backup is written to exactly that key; each
	// periodic backup to "<key>_v<revision>_<time>", as the CoreOS operator names them.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/[^/].*$')",message="path must be <bucket>/<key>: a bucket name (3-63 lowercase letters, digits, dots or hyphens), a slash and a key"
	// +required
	Path string `json:"path"`

	// awsSecret is a Secret in this namespace with the CoreOS operator's keys: credentials
	// (an AWS shared credentials file, profile default) and, optionally, config (an AWS
	// config file, for the region).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	AWSSecret string `json:"awsSecret"`

	// endpoint of an S3-compatible store, such as https://s3.example.com; AWS when unset.
	// An address inside the cluster or the machine (private, loopback, link-local) is
	// refused (EndpointNotAllowed) unless the operator lists it (the manager's
	// --backup-s3-endpoints, such as s3.quintet-s3.svc); the API server's always is.
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.startsWith('http://') || self.startsWith('https://')",message="endpoint is a URL such as https://s3.example.com"
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// forcePathStyle addresses objects as <endpoint>/<bucket>/<key> instead of
	// <bucket>.<endpoint>/<key>: most S3-compatible stores need it.
	// +optional
	ForcePathStyle bool `json:"forcePathStyle,omitempty"`
}

// PVCBackupSource is a file on a PersistentVolumeClaim.
type PVCBackupSource struct {
	// claimName of a PersistentVolumeClaim in this namespace. It must be mountable by the
	// backup's pod (ReadWriteOnce volumes: on the node where it is mounted already, if it is).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	ClaimName string `json:"claimName"`

	// path of the backup in the volume, relative, such as etcd/example.db. A one-shot
	// backup is written to exactly that file; each periodic backup to
	// "<path>_v<revision>_<time>", as in a bucket.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.endsWith('/') && !self.split('/').exists(p, p == '..' || p == '.' || p == '')",message="path is a relative file path in the volume, such as etcd/example.db, without . or .. parts"
	// +required
	Path string `json:"path"`
}

// BackupPolicy is when backups are taken and how many are kept.
// +kubebuilder:validation:XValidation:rule="!(has(self.backupIntervalInSecond) && has(self.schedule))",message="set backupIntervalInSecond or schedule, not both"
// +kubebuilder:validation:XValidation:rule="(!has(self.maxBackups) && !has(self.maxAge)) || has(self.backupIntervalInSecond) || has(self.schedule)",message="maxBackups and maxAge prune periodic backups: set backupIntervalInSecond or schedule too"
type BackupPolicy struct {
	// timeoutInSecond bounds one backup, from connecting to the member to the last byte
	// stored. 300 when unset.
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=86400
	// +optional
	TimeoutInSecond int64 `json:"timeoutInSecond,omitempty"`

	// backupIntervalInSecond takes a backup this long after the start of the last one.
	// +kubebuilder:validation:Minimum=5
	// +optional
	BackupIntervalInSecond int64 `json:"backupIntervalInSecond,omitempty"`

	// schedule takes backups at the times of a cron expression, in UTC: five fields
	// (minute hour day-of-month month day-of-week) or a descriptor such as @hourly.
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.startsWith('@') || self.split(' ').filter(f, f != '').size() == 5",message="schedule is a cron expression of five fields, such as \"0 */6 * * *\", or a descriptor such as @daily"
	// +optional
	Schedule string `json:"schedule,omitempty"`

	// maxBackups keeps this many periodic backups, the newest; older ones are deleted from
	// the store after each successful backup. All are kept when unset.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxBackups int `json:"maxBackups,omitempty"`

	// maxAge deletes periodic backups older than this after each successful backup; the
	// newest is always kept.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m')",message="maxAge must be at least 1m"
	// +optional
	MaxAge *metav1.Duration `json:"maxAge,omitempty"`
}

// BackupRecord is one backup taken.
type BackupRecord struct {
	// path of the backup in the store: "<bucket>/<key>", or "<claimName>/<path>" on a volume.
	Path string `json:"path"`
	// member the snapshot was taken from.
	// +optional
	Member string `json:"member,omitempty"`
	// etcdRevision: every write up to this revision is in the backup (the member's revision
	// when the snapshot began).
	EtcdRevision int64 `json:"etcdRevision"`
	// etcdVersion of the member that took it (etcd 3.6 and later report it).
	// +optional
	EtcdVersion string `json:"etcdVersion,omitempty"`
	// size in bytes, as stored (the database and etcd's 32-byte SHA-256 of it).
	Size int64 `json:"size"`
	// sha256 of the database, in hexadecimal: what etcd appends to the snapshot, and what
	// `etcdutl snapshot restore` checks. The operator checked it before counting the backup.
	SHA256 string `json:"sha256"`
	// startTime of the backup.
	StartTime metav1.Time `json:"startTime"`
	// duration from connecting to the member to the object stored.
	Duration metav1.Duration `json:"duration"`
	// keyspace of the member at the snapshot's revision, read right after the snapshot (with
	// spec.verify): what a restore of the backup must show.
	// +optional
	Keyspace *KeyspaceFingerprint `json:"keyspace,omitempty"`
	// verification of the backup, restored into a scratch etcd (with spec.verify).
	// +optional
	Verification *BackupVerification `json:"verification,omitempty"`
}

// KeyspaceFingerprint is an etcd keyspace at a revision, as a member reports it.
type KeyspaceFingerprint struct {
	// revision the fingerprint is of: the snapshot's.
	Revision int64 `json:"revision"`
	// compactRevision of the member then: HashKV covers the revisions after it.
	CompactRevision int64 `json:"compactRevision"`
	// keys at the revision.
	Keys int64 `json:"keys"`
	// hashKV is etcd's HashKV at the revision (the hash etcd's corruption check compares
	// between members), in hexadecimal.
	HashKV string `json:"hashKV"`
}

// BackupVerification is the check of a backup restored into a scratch etcd.
type BackupVerification struct {
	// time the check ended.
	Time metav1.Time `json:"time"`
	// message says what was compared.
	Message string `json:"message"`
}

// BackupFailure is the last backup that failed.
type BackupFailure struct {
	// time it failed.
	Time metav1.Time `json:"time"`
	// reason is the Degraded condition's: which part failed.
	Reason string `json:"reason"`
	// message says why.
	Message string `json:"message"`
	// consecutive failures since the last success; the next attempt waits longer after each.
	Consecutive int32 `json:"consecutive"`
}

// EtcdBackupStatus is what the backups did. succeeded, reason, etcdVersion, etcdRevision
// and lastSuccessDate are the CoreOS operator's.
type EtcdBackupStatus struct {
	// observedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// succeeded is true when the last backup succeeded.
	// +optional
	Succeeded bool `json:"succeeded"`
	// reason the last backup failed.
	// +optional
	Reason string `json:"reason,omitempty"`
	// etcdVersion of the last successful backup.
	// +optional
	EtcdVersion string `json:"etcdVersion,omitempty"`
	// etcdRevision of the last successful backup.
	// +optional
	EtcdRevision int64 `json:"etcdRevision,omitempty"`
	// lastSuccessDate is when the last successful backup was taken.
	// +optional
	LastSuccessDate *metav1.Time `json:"lastSuccessDate,omitempty"`
	// lastBackup is the last successful backup.
	// +optional
	LastBackup *BackupRecord `json:"lastBackup,omitempty"`
	// verifying is the backup taken and being verified (spec.verify): it counts once verified.
	// +optional
	Verifying *BackupRecord `json:"verifying,omitempty"`
	// lastFailure is the last failed backup, while no backup succeeded after it.
	// +optional
	LastFailure *BackupFailure `json:"lastFailure,omitempty"`
	// nextBackupTime is when the next backup is due (periodic backups).
	// +optional
	NextBackupTime *metav1.Time `json:"nextBackupTime,omitempty"`
	// conditions: Ready, Progressing, Degraded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// EtcdBackup takes snapshots of an etcd cluster into an object store: once, or periodically
// with retention. Each snapshot's SHA-256 is checked before it counts; a failed backup never
// replaces or prunes a good one.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=quintet
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.clusterName`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Last Success",type=date,JSONPath=`.status.lastSuccessDate`
// +kubebuilder:printcolumn:name="Revision",type=integer,JSONPath=`.status.etcdRevision`,priority=1
// +kubebuilder:printcolumn:name="Path",type=string,JSONPath=`.status.lastBackup.path`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type EtcdBackup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what to back up, where and when.
	// +required
	Spec EtcdBackupSpec `json:"spec"`

	// status is what the backups did.
	// +optional
	Status EtcdBackupStatus `json:"status,omitempty"`
}

// EtcdBackupList is a list of EtcdBackups.
// +kubebuilder:object:root=true
type EtcdBackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EtcdBackup `json:"items"`
}

// GetConditions returns the status conditions.
func (b *EtcdBackup) GetConditions() []metav1.Condition { return b.Status.Conditions }

// SetConditions replaces the status conditions.
func (b *EtcdBackup) SetConditions(conds []metav1.Condition) { b.Status.Conditions = conds }

// Condition reasons of an EtcdBackup, besides the shared ones. Ready is True once a backup
// succeeded and the last attempt did not fail; Degraded is True when the last attempt failed.
const (
	// ReasonBackupSucceeded: the last backup succeeded (Ready).
	ReasonBackupSucceeded = "BackupSucceeded"
	// ReasonBackupPending: no backup has been taken yet (Ready False).
	ReasonBackupPending = "BackupPending"
	// ReasonBackingUp: a backup is under way (Progressing).
	ReasonBackingUp = "BackingUp"
	// ReasonWaitingForCluster: the first backup waits for its new EtcdCluster to become
	// Available (Progressing); later, an unavailable cluster fails a backup.
	ReasonWaitingForCluster = "WaitingForCluster"
	// ReasonClusterNotFound: spec.clusterName names no EtcdCluster here.
	ReasonClusterNotFound = "ClusterNotFound"
	// ReasonEndpointNotAllowed: an etcdEndpoints entry names no EtcdCluster of this
	// namespace, or the S3 endpoint is inside the cluster or the API server's, and the
	// operator has not allowed it (the manager's --backup-etcd-endpoints and
	// --backup-s3-endpoints). Nothing was connected to.
	ReasonEndpointNotAllowed = "EndpointNotAllowed"
	// ReasonClusterUnreachable: no member answered, or none could stream a snapshot.
	ReasonClusterUnreachable = "ClusterUnreachable"
	// ReasonCredentialsInvalid: the awsSecret or clientTLSSecret is missing or unusable,
	// or the store refused the credentials.
	ReasonCredentialsInvalid = "CredentialsInvalid"
	// ReasonStoreFailed: the object store refused or failed the upload (no such bucket,
	// no answer, out of space).
	ReasonStoreFailed = "StoreFailed"
	// ReasonSnapshotCorrupt: the snapshot's SHA-256 did not match what etcd sent with it;
	// nothing was stored.
	ReasonSnapshotCorrupt = "SnapshotCorrupt"
	// ReasonScheduleInvalid: spec.backupPolicy.schedule is not a cron expression.
	ReasonScheduleInvalid = "ScheduleInvalid"
	// ReasonVerifying: a backup was taken and its Job restores it into a scratch etcd to
	// compare it (Progressing).
	ReasonVerifying = "Verifying"
	// ReasonVerificationFailed: a backup restored into a scratch etcd did not hold the
	// member's keyspace at its revision; it was deleted.
	ReasonVerificationFailed = "VerificationFailed"
	// ReasonBackupVerified: a backup restored into a scratch etcd held the member's keyspace
	// (an Event).
	ReasonBackupVerified = "BackupVerified"
	// ReasonJobFailed: the Job of a backup to a volume failed without saying why (its pod
	// could not start, was killed, or ran past the timeout).
	ReasonJobFailed = "JobFailed"
)
