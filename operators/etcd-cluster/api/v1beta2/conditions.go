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
	// ReasonAllMembersReady: every desired member runs, is healthy and votes (Ready).
	ReasonAllMembersReady = "AllMembersReady"
	// ReasonQuorumAvailable: a quorum of the voting members is healthy (Available).
	ReasonQuorumAvailable = "QuorumAvailable"
	// ReasonMembersUnreachable: no member answers the operator: pods not running etcd yet
	// (a new cluster, members on kwok nodes), or their DNS names do not resolve from it.
	ReasonMembersUnreachable = "MembersUnreachable"
	// ReasonQuorumLost: members answer, but fewer than a quorum of the voters are healthy:
	// the cluster takes no writes.
	ReasonQuorumLost = "QuorumLost"
	// ReasonBootstrapping: the first member starts a new cluster.
	ReasonBootstrapping = "Bootstrapping"
	// ReasonEarlierVolumes: a cluster of this name was deleted and made again, and the
	// volumes the earlier one left are not yet deleted: no member starts or joins until the
	// garbage collector has deleted them, so none starts on the earlier cluster's data.
	ReasonEarlierVolumes = "EarlierClusterVolumes"
	// ReasonScalingOut: a member is added, as a learner.
	ReasonScalingOut = "ScalingOut"
	// ReasonScalingIn: a member is removed through etcd's API before its pod goes.
	ReasonScalingIn = "ScalingIn"
	// ReasonPromotingLearner: a learner that caught up with the leader becomes a voter.
	ReasonPromotingLearner = "PromotingLearner"
	// ReasonReplacingMember: a member that is really gone (its volume lost, or unreachable
	// for replaceUnreachableAfter) is removed and added again as a new member.
	ReasonReplacingMember = "ReplacingMember"
	// ReasonUpgrading: members restart onto a new etcd version one at a time.
	ReasonUpgrading = "Upgrading"
	// ReasonPaused: spec.paused is true; the operator changes nothing.
	ReasonPaused = "Paused"
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
	// ReasonIssuerNotAllowed: certManager.issuerRef names a ClusterIssuer the operator does
	// not let EtcdClusters use (the manager's --cluster-issuers): a ClusterIssuer's CA may be
	// one other namespaces' clusters trust. No Certificate is asked for; members keep the
	// certificates they run with.
	ReasonIssuerNotAllowed = "IssuerNotAllowed"
	// ReasonTLSRotationUnsafe: no step towards the new certificates is trusted by the
	// members running and trusts them (the running certificates expired, say): restarting a
	// member onto them would cut it off. A new CA alone is not unsafe: members move to it in
	// three steps, both CAs trusted in between.
	ReasonTLSRotationUnsafe = "TLSRotationUnsafe"
	// ReasonIssuingCertificates: cert-manager has not yet issued every certificate the
	// cluster's first members need.
	ReasonIssuingCertificates = "IssuingCertificates"
	// ReasonExpiresSoon: a static certificate expires within 30 days (CertificateExpiring
	// True): replace the Secrets' certificates.
	ReasonExpiresSoon = "ExpiresSoon"
	// ReasonNotSoon: no static certificate expires within 30 days (CertificateExpiring).
	ReasonNotSoon = "NotSoon"
	// ReasonRenewedByOperator: the operator renews its own certificates (CertificateExpiring).
	ReasonRenewedByOperator = "RenewedByOperator"
	// ReasonRenewedByCertManager: cert-manager renews the certificates (CertificateExpiring).
	ReasonRenewedByCertManager = "RenewedByCertManager"
	// ReasonEvenSize: a Warning Event: an even size tolerates no more failures than the odd
	// size below it.
	ReasonEvenSize = "EvenSize"
	// ReasonDefragmented: an Event: a member was defragmented, with what it freed.
	ReasonDefragmented = "Defragmented"
	// ReasonDefragmentFailed: a Warning Event: a member's defragmentation failed; it is tried
	// again in a later pass.
	ReasonDefragmentFailed = "DefragmentFailed"
	// ReasonScheduled: a defragmentation of defragmentation.schedule's run.
	ReasonScheduled = "Scheduled"
	// ReasonFreePages: a defragmentation of a member past defragmentation.freePercent.
	ReasonFreePages = "FreePages"
	// ReasonUnsafeMembershipSkip: a membership change that would lose the quorum (or that etcd
	// refuses for now) was not made (Degraded True); the operator waits.
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

// BackupLabel names, on a backup Job and its pod, the EtcdBackup it runs for: the members'
// NetworkPolicy lets these pods (the operator's, app.kubernetes.io/managed-by) reach the
// client port.
const BackupLabel = "etcd.database.coreos.com/backup"

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
