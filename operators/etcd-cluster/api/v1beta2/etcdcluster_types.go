package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults of an EtcdCluster.
const (
	DefaultVersion    = "3.6.8"
	DefaultRepository = "gcr.io/etcd-development/etcd"
	// DefaultStorageSize fits etcd's default 2 GiB backend quota twice over (a
	// defragmentation writes a second copy of the database) with the WAL and snapshots.
	DefaultStorageSize = "8Gi"
)

// EtcdClusterSpec is the desired state of an etcd cluster.
// +kubebuilder:validation:XValidation:rule="has(self.restore) == has(oldSelf.restore) && (!has(self.restore) || self.restore == oldSelf.restore)",message="restore cannot be added, changed or removed once the cluster exists: a cluster starts from one snapshot; make a new EtcdCluster (or an EtcdRestore) to start from another"
// +kubebuilder:validation:XValidation:rule="(has(self.pod) && has(self.pod.storage)) == (has(oldSelf.pod) && has(oldSelf.pod.storage)) && (!has(self.pod) || !has(self.pod.storage) || self.pod.storage == oldSelf.pod.storage)",message="pod.storage cannot change once the cluster exists: each member keeps the volume it has; make a new cluster to move to other storage"
// +kubebuilder:validation:XValidation:rule="has(self.TLS) == has(oldSelf.TLS)",message="TLS cannot be turned on or off for an existing cluster: members would stop understanding each other; create a new EtcdCluster with the TLS you want and copy the data into it (etcdctl make-mirror)"
// +kubebuilder:validation:XValidation:rule="!has(self.TLS) || !has(oldSelf.TLS) || (has(self.TLS.static) == has(oldSelf.TLS.static) && has(self.TLS.certManager) == has(oldSelf.TLS.certManager))",message="the TLS source cannot change between static, certManager and operatorManaged: the new CA would not be trusted by running members"
type EtcdClusterSpec struct {
	// size is the number of members, 1 to 9. An even size tolerates no more failures than
	// the odd size below it; it is allowed, with a Warning Event (EvenSize).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=9
	// +kubebuilder:default=3
	// +optional
	Size int32 `json:"size,omitempty"`

	// version of etcd, a semantic version without a leading "v" (the image tag is "v"+version).
	// 3.5.0 at least: the operator adds members as learners and reads alarms and peer
	// connections as etcd 3.5 reports them.
	// +kubebuilder:default="3.6.8"
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9]+\\\\.[0-9]+\\\\.[0-9]+$')",message="version must be a semantic version such as 3.6.8, without a leading v"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[0-9]+\\\\.[0-9]+\\\\.[0-9]+$') || int(self.split('.')[0]) > 3 || (int(self.split('.')[0]) == 3 && int(self.split('.')[1]) >= 5)",message="etcd 3.5.0 or later is supported: the operator adds members as learners"
	// +optional
	Version string `json:"version,omitempty"`

	// repository of the etcd image.
	// +kubebuilder:default="gcr.io/etcd-development/etcd"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Repository string `json:"repository,omitempty"`

	// replaceUnreachableAfter is how long a member must be unreachable, by the operator and
	// by the cluster's leader, while every other member is healthy, before it is removed and
	// replaced with an empty member. A member whose pod fails because of the spec, or that
	// raised an alarm, is never replaced; a member whose volume is deleted is replaced at once.
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m')",message="replaceUnreachableAfter must be at least 1m: a slow start or a restart must not cost a member its data"
	// +optional
	ReplaceUnreachableAfter *metav1.Duration `json:"replaceUnreachableAfter,omitempty"`

	// paused stops the operator from changing the cluster; status is still reported.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// pod is the policy for the member pods.
	// +optional
	Pod *PodPolicy `json:"pod,omitempty"`

	// TLS for peers, clients and the operator; plain HTTP when unset. Set when the cluster
	// is made: it cannot be turned on or off later.
	// +optional
	TLS *TLSPolicy `json:"TLS,omitempty"`

	// restore starts the cluster from a snapshot: its first member restores it (etcdutl
	// snapshot restore) before it starts, and the members added after copy it from that
	// one. The snapshot is checked (readable, whole, its SHA-256) before the first member
	// starts; until then nothing runs and the Restored condition says what is wrong. Set
	// when the cluster is made: it cannot be added or changed later. A cluster whose every
	// member lost its volume starts again from the snapshot, not empty.
	// +optional
	Restore *RestoreSource `json:"restore,omitempty"`

	// defragmentation is when the operator defragments members (gives a database's free
	// pages back to the disk): one member at a time, followers first and the leader last,
	// only while the cluster is Ready (every member a healthy voter, no alarm, nothing
	// changing). By default a member is defragmented once its database is at least 64Mi and
	// half free pages.
	// +kubebuilder:default={}
	// +optional
	Defragmentation *DefragmentationPolicy `json:"defragmentation,omitempty"`

	// clientAccess is who may connect to the members' client port (2379), through the
	// NetworkPolicy the operator gives the members (see networkPolicy). By default every pod
	// of the cluster's namespace may. The operator's own manager and backup Jobs, and the
	// members themselves, may whatever this says.
	// +kubebuilder:default={}
	// +optional
	ClientAccess *ClientAccess `json:"clientAccess,omitempty"`

	// networkPolicy says whether the operator gives the members a NetworkPolicy, named
	// <cluster>-members: Managed (the default) makes and keeps it; it lets only the cluster's
	// own pods reach the peer port (2380), and what clientAccess allows reach the client port.
	// None makes none, and deletes the one the operator made: for a namespace whose policies
	// are written by someone else (a platform team, a policy engine that refuses others'),
	// where the operator's would be refused or in the way. A network that does not enforce
	// NetworkPolicy ignores the object: None is not needed there.
	// +kubebuilder:validation:Enum=Managed;None
	// +kubebuilder:default=Managed
	// +optional
	NetworkPolicy NetworkPolicyMode `json:"networkPolicy,omitempty"`
}

// NetworkPolicyMode says whether the operator manages the members' NetworkPolicy.
type NetworkPolicyMode string

// The modes of spec.networkPolicy.
const (
	NetworkPolicyManaged NetworkPolicyMode = "Managed"
	NetworkPolicyNone    NetworkPolicyMode = "None"
)

// ClientAccess is who may connect to the members' client port.
// +kubebuilder:validation:XValidation:rule="!has(self.allow) || self.allow != 'Selected' || has(self.from)",message="clientAccess.from is required with allow: Selected: list the pods, namespaces or addresses that may connect to the client port"
// +kubebuilder:validation:XValidation:rule="!has(self.from) || (has(self.allow) && self.allow == 'Selected')",message="clientAccess.from is only read with allow: Selected; set allow: Selected to use it (add podSelector: {} to keep the cluster's namespace)"
type ClientAccess struct {
	// allow is who may connect: Namespace (the default), every pod of the cluster's
	// namespace; Selected, only the peers in from; All, anything the network lets reach the
	// pods (other namespaces, and addresses outside the cluster through a LoadBalancer,
	// NodePort or routable pod IPs).
	// +kubebuilder:validation:Enum=Namespace;Selected;All
	// +kubebuilder:default=Namespace
	// +optional
	Allow ClientAccessAllow `json:"allow,omitempty"`

	// from are the peers that may connect with allow: Selected, as in a NetworkPolicy's
	// ingress rule (a peer is a podSelector, a namespaceSelector, both, or an ipBlock;
	// podSelector: {} is every pod of the cluster's namespace). Required with Selected,
	// refused otherwise.
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +optional
	From []networkingv1.NetworkPolicyPeer `json:"from,omitempty"`
}

// ClientAccessAllow is who may connect to the client port.
type ClientAccessAllow string

// Who may connect to the client port.
const (
	ClientAccessNamespace ClientAccessAllow = "Namespace"
	ClientAccessSelected  ClientAccessAllow = "Selected"
	ClientAccessAll       ClientAccessAllow = "All"
)

// DefragmentationPolicy is when members are defragmented.
type DefragmentationPolicy struct {
	// schedule defragments every member at the times of a cron expression, in UTC: five
	// fields (minute hour day-of-month month day-of-week) or a descriptor such as @daily.
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.startsWith('@') || self.split(' ').filter(f, f != '').size() == 5",message="schedule is a cron expression of five fields, such as \"0 3 * * 0\", or a descriptor such as @weekly"
	// +optional
	Schedule string `json:"schedule,omitempty"`

	// freePercent defragments a member whose database is at least this much free pages
	// (size minus size in use, in percent of its size) and at least minDBSize. 0 turns it off.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=99
	// +kubebuilder:default=50
	// +optional
	FreePercent int32 `json:"freePercent"`

	// minDBSize is the smallest database freePercent defragments.
	// +kubebuilder:default="64Mi"
	// +optional
	MinDBSize *resource.Quantity `json:"minDBSize,omitempty"`
}

// PodPolicy shapes the member pods.
type PodPolicy struct {
	// resources of the etcd container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// nodeSelector of the member pods.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations of the member pods.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// storage of each member's data.
	// +optional
	Storage *StorageSpec `json:"storage,omitempty"`

	// antiAffinity spreads members over nodes: Preferred (the default) asks the scheduler to
	// put them on different nodes when it can; Required never puts two on one node (a
	// cluster then needs as many schedulable nodes as members).
	// +kubebuilder:validation:Enum=Preferred;Required
	// +kubebuilder:default=Preferred
	// +optional
	AntiAffinity AntiAffinity `json:"antiAffinity,omitempty"`

	// etcdArgs are extra etcd flags, such as --quota-backend-bytes=4294967296. Flags the
	// operator manages (names, URLs, the initial cluster and discovery, the data directory,
	// TLS) are refused, and so is --config-file, which would replace them all.
	// Unless they set --auto-compaction-mode or --auto-compaction-retention, members compact
	// their history hourly (periodic, 1h).
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.all(a, a.startsWith('--'))",message="each etcdArgs entry must be a flag starting with --"
	// +kubebuilder:validation:XValidation:rule="self.all(a, !['--name', '--data-dir', '--listen-client-urls', '--listen-peer-urls', '--advertise-client-urls', '--initial-advertise-peer-urls', '--initial-cluster', '--initial-cluster-state', '--initial-cluster-token', '--cert-file', '--key-file', '--trusted-ca-file', '--client-cert-auth', '--peer-cert-file', '--peer-key-file', '--peer-trusted-ca-file', '--peer-client-cert-auth', '--config-file', '--discovery', '--discovery-srv', '--discovery-endpoints'].exists(f, a == f || a.startsWith(f + '=')))",message="etcdArgs must not set flags the operator manages (name, data dir, URLs, initial cluster and discovery, TLS files and client certificate checks: see spec.TLS) or --config-file, which would replace them all"
	// +optional
	EtcdArgs []string `json:"etcdArgs,omitempty"`
}

// AntiAffinity is how strictly members are kept on different nodes.
type AntiAffinity string

// The anti-affinities of member pods.
const (
	AntiAffinityPreferred AntiAffinity = "Preferred"
	AntiAffinityRequired  AntiAffinity = "Required"
)

// StorageSpec is the persistent volume of each member.
type StorageSpec struct {
	// size of each member's volume; 8Gi fits etcd's default 2 GiB quota with room to
	// defragment.
	// +kubebuilder:default="8Gi"
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`

	// storageClassName of the volumes; the cluster's default class when unset.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// Phase summarises the cluster's state for people; conditions carry the details.
// +kubebuilder:validation:Enum=Creating;Running;Scaling;Upgrading;Paused;Failed
type Phase string

// Phases of an EtcdCluster.
const (
	PhaseCreating  Phase = "Creating"
	PhaseRunning   Phase = "Running"
	PhaseScaling   Phase = "Scaling"
	PhaseUpgrading Phase = "Upgrading"
	PhasePaused    Phase = "Paused"
	PhaseFailed    Phase = "Failed"
)

// MemberStatus is one etcd member as the cluster reports it.
type MemberStatus struct {
	// name of the member, which is its pod's name.
	// +required
	Name string `json:"name"`
	// id of the member in hexadecimal, as etcdctl prints it.
	// +optional
	ID string `json:"id,omitempty"`
	// ready is true when the member answers its health check.
	// +optional
	Ready bool `json:"ready"`
	// learner is true while the member is a non-voting learner catching up.
	// +optional
	Learner bool `json:"learner,omitempty"`
	// dbSize is the size of the member's database file, in bytes.
	// +optional
	DBSize int64 `json:"dbSize,omitempty"`
	// dbSizeInUse is the part of it holding data; the rest is free pages a defragmentation
	// gives back.
	// +optional
	DBSizeInUse int64 `json:"dbSizeInUse,omitempty"`
	// lastDefragmentTime is when the operator last defragmented the member.
	// +optional
	LastDefragmentTime *metav1.Time `json:"lastDefragmentTime,omitempty"`
}

// DefragmentationStatus is what the defragmentations did, and what is due.
type DefragmentationStatus struct {
	// last defragmentation.
	// +optional
	Last *DefragmentationRecord `json:"last,omitempty"`
	// scheduledRun is the scheduled time whose run is under way: every member
	// defragmented before it is, one at a time.
	// +optional
	ScheduledRun *metav1.Time `json:"scheduledRun,omitempty"`
	// nextScheduleTime is when the next scheduled run is due.
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`
}

// DefragmentationRecord is one member defragmented.
type DefragmentationRecord struct {
	// member defragmented.
	Member string `json:"member"`
	// time it started.
	Time metav1.Time `json:"time"`
	// duration: the member served nothing for this long.
	Duration metav1.Duration `json:"duration"`
	// dbSizeBefore and dbSizeAfter, in bytes.
	DBSizeBefore int64 `json:"dbSizeBefore"`
	DBSizeAfter  int64 `json:"dbSizeAfter"`
	// reason: Scheduled, or FreePages (past freePercent).
	Reason string `json:"reason"`
	// leader is true when the member was the leader: it goes last.
	// +optional
	Leader bool `json:"leader,omitempty"`
}

// EtcdClusterStatus is the observed state of an etcd cluster.
type EtcdClusterStatus struct {
	// observedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// phase summarises the state.
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// size is the number of members the cluster has.
	// +optional
	Size int32 `json:"size"`
	// readyMembers is the number of members that answer their health check.
	// +optional
	ReadyMembers int32 `json:"readyMembers"`
	// currentVersion is the etcd version every member runs.
	// +optional
	CurrentVersion string `json:"currentVersion,omitempty"`
	// targetVersion is the version an upgrade in progress moves to.
	// +optional
	TargetVersion string `json:"targetVersion,omitempty"`
	// members of the cluster.
	// +listType=map
	// +listMapKey=name
	// +optional
	Members []MemberStatus `json:"members,omitempty"`
	// leaderID is the id of the current leader, in hexadecimal.
	// +optional
	LeaderID string `json:"leaderID,omitempty"`
	// clientService is the Service clients connect to, port 2379.
	// +optional
	ClientService string `json:"clientService,omitempty"`
	// tls is what the cluster's TLS runs with, when on.
	// +optional
	TLS *TLSStatus `json:"tls,omitempty"`
	// defragmentation: the last one, and the schedule's.
	// +optional
	Defragmentation *DefragmentationStatus `json:"defragmentation,omitempty"`
	// conditions: Ready, Available, Progressing, Degraded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// EtcdCluster is an etcd cluster the operator runs: members in a StatefulSet, membership
// changed through etcd's own cluster API one member at a time.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.size,statuspath=.status.size
// +kubebuilder:resource:shortName=etcd,categories=quintet
// +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=`.spec.size`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.currentVersion`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type EtcdCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state.
	// +optional
	Spec EtcdClusterSpec `json:"spec,omitempty"`

	// status is the observed state.
	// +optional
	Status EtcdClusterStatus `json:"status,omitempty"`
}

// EtcdClusterList is a list of EtcdClusters.
// +kubebuilder:object:root=true
type EtcdClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EtcdCluster `json:"items"`
}

// GetConditions returns the status conditions.
func (c *EtcdCluster) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions replaces the status conditions.
func (c *EtcdCluster) SetConditions(conds []metav1.Condition) { c.Status.Conditions = conds }
