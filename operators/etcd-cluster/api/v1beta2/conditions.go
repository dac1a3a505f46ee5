package v1beta2

// An EtcdCluster carries the conditions every Quintet kind has (shared/conditions): Ready is
// True when every desired member runs, is healthy and votes; Progressing is True while members
// are added, removed, promoted, restarted or upgraded; Degraded is True when something needs
// attention: unreachable or unhealthy members, an unsupported upgrade, an alarm, an object of
// someone else's (ObjectNotOwned) or one the API server rejects (ObjectRejected), a failed
// membership step (ReconcileFailed). And one of its own:
const (
	// AvailableCondition is True when a quorum of members answers: the cluster serves.
	AvailableCondition = "Available"
	// CertificateExpiringCondition, with TLS on, is True (and a Warning Event) when a
	// certificate of static Secrets expires within 30 days: the operator cannot renew it. It
	// does not make the cluster less Ready: it serves until the certificate expires.
	CertificateExpiringCondition = "CertificateExpiring"
)

// Condition reasons of an EtcdCluster, besides the shared ones.
const (
	ReasonAllMembersReady    = "AllMembersReady"
	ReasonQuorumAvailable    = "QuorumAvailable"
	ReasonMembersUnreachable = "MembersUnreachable"
	ReasonQuorumLost         = "QuorumLost"
	ReasonBootstrapping      = "Bootstrapping"
	ReasonScalingOut         = "ScalingOut"
	ReasonScalingIn          = "ScalingIn"
	ReasonPromotingLearner   = "PromotingLearner"
	ReasonReplacingMember    = "ReplacingMember"
	ReasonUpgrading          = "Upgrading"
	ReasonPaused             = "Paused"
	// ReasonUpgradeRefused: spec.version is not a supported move from the running version.
	ReasonUpgradeRefused = "UpgradeRefused"
	// ReasonMembersUnhealthy: some members do not answer, but a quorum does.
	ReasonMembersUnhealthy = "MembersUnhealthy"
	// ReasonMemberFailing: a member's pod cannot run because of the spec (an image that
	// cannot be pulled, a flag etcd refuses): the member keeps its data and waits for a spec
	// that works; nothing else changes meanwhile.
	ReasonMemberFailing = "MemberFailing"
	// ReasonNoSpace: a member reached its backend quota (etcd's NOSPACE alarm): the cluster
	// takes no writes until space is reclaimed and the alarm disarmed. No member is replaced.
	ReasonNoSpace = "NoSpace"
	// ReasonAlarm: a member raised another alarm, such as CORRUPT.
	ReasonAlarm = "Alarm"
	// ReasonRestarting: members restart onto a new spec one at a time.
	ReasonRestarting = "Restarting"
	// ReasonRecovering: the workloads of volumes holding data are made again.
	ReasonRecovering = "Recovering"
	// ReasonTLSInvalid: the certificates spec.TLS names cannot be used (a Secret or key is
	// missing, a certificate does not cover a member, has expired or is not signed by the
	// CA given). Members keep the certificates they run with; nothing restarts or changes.
	ReasonTLSInvalid = "TLSInvalid"
	// ReasonTLSRotationUnsafe: no step towards the new certificates is trusted by the
	// members running and trusts them (the running certificates expired, say): restarting a
	// member onto them would cut it off. A new CA alone is not unsafe: members move to it in
	// three steps, both CAs trusted in between.
	ReasonTLSRotationUnsafe = "TLSRotationUnsafe"
	// ReasonIssuingCertificates: cert-manager has not yet issued every certificate the
	// cluster's first members need.
	ReasonIssuingCertificates = "IssuingCertificates"
	// Reasons of CertificateExpiring: a static certificate expires within 30 days
	// (ExpiresSoon), none does (NotSoon), or the operator (RenewedByOperator) or
	// cert-manager (RenewedByCertManager) renews them.
	ReasonExpiresSoon          = "ExpiresSoon"
	ReasonNotSoon              = "NotSoon"
	ReasonRenewedByOperator    = "RenewedByOperator"
	ReasonRenewedByCertManager = "RenewedByCertManager"
	ReasonEvenSize             = "EvenSize"
	// Events of defragmentations (and DefragmentationRecord's reasons: Scheduled, FreePages).
	ReasonDefragmented         = "Defragmented"
	ReasonDefragmentFailed     = "DefragmentFailed"
	ReasonScheduled            = "Scheduled"
	ReasonFreePages            = "FreePages"
	ReasonUnsafeMembershipSkip = "UnsafeMembershipChangeRefused"
)

// Labels and annotations of the CoreOS etcd operator, kept so existing tooling works.
const (
	// ClusterLabel is on every member pod and volume: `kubectl get po -l etcd_cluster=<name>`.
	ClusterLabel = "etcd_cluster"
	// ScopeAnnotation with value ScopeClusterWide marks a cluster for a --cluster-wide operator.
	ScopeAnnotation  = "etcd.database.coreos.com/scope"
	ScopeClusterWide = "clusterwide"
)

// How the operator starts each member: a member pod waits behind StartGate until the
// operator has decided, from the membership it just read or changed, how it joins; it
// writes that on the pod (the annotations below, read by etcd as environment variables)
// and lifts the gate. A volume records whose data it holds (MemberIDAnnotation), so a pod
// that comes back on a new volume is never started under its old member ID.
const (
	StartGate                     = "etcd.database.coreos.com/member-start"
	InitialClusterAnnotation      = "etcd.database.coreos.com/initial-cluster"
	InitialClusterStateAnnotation = "etcd.database.coreos.com/initial-cluster-state"
	MemberIDAnnotation            = "etcd.database.coreos.com/member-id"
	// The snapshot the first member of a cluster with spec.restore restores: the object the
	// operator checked, and its database's SHA-256, which the member checks again.
	RestoreKeyAnnotation    = "etcd.database.coreos.com/restore-key"
	RestoreSHA256Annotation = "etcd.database.coreos.com/restore-sha256"
)

// Reasons of the operator's OperatorCondition Upgradeable (OLM holds an upgrade of the
// operator while it is False).
const (
	// ReasonMembershipChanging: some cluster is changing members or rolling a version.
	ReasonMembershipChanging = "MembershipChanging"
	// ReasonNoMembershipChange: no cluster is mid-operation; the operator may be replaced.
	ReasonNoMembershipChange = "NoMembershipChange"
)
