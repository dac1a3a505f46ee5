package v1beta2

// Condition types of an EtcdCluster.
const (
	// ReadyCondition is True when every desired member runs, is healthy and votes.
	ReadyCondition = "Ready"
	// AvailableCondition is True when a quorum of members answers: the cluster serves.
	AvailableCondition = "Available"
	// ProgressingCondition is True while members are added, removed, promoted or upgraded.
	ProgressingCondition = "Progressing"
	// DegradedCondition is True when something needs attention: unreachable or unhealthy
	// members, an unsupported upgrade, an even size.
	DegradedCondition = "Degraded"
)

// Condition reasons of an EtcdCluster.
const (
	ReasonAllMembersReady      = "AllMembersReady"
	ReasonQuorumAvailable      = "QuorumAvailable"
	ReasonMembersUnreachable   = "MembersUnreachable"
	ReasonQuorumLost           = "QuorumLost"
	ReasonBootstrapping        = "Bootstrapping"
	ReasonScalingOut           = "ScalingOut"
	ReasonScalingIn            = "ScalingIn"
	ReasonPromotingLearner     = "PromotingLearner"
	ReasonReplacingMember      = "ReplacingMember"
	ReasonUpgrading            = "Upgrading"
	ReasonStable               = "Stable"
	ReasonPaused               = "Paused"
	ReasonUnsupportedUpgrade   = "UnsupportedUpgrade"
	ReasonEvenSize             = "EvenSize"
	ReasonAsExpected           = "AsExpected"
	ReasonUnsafeMembershipSkip = "UnsafeMembershipChangeRefused"
	// ReasonObjectNotOwned: an object the cluster needs (Service, ConfigMap, StatefulSet, ...)
	// exists under its name but the cluster does not control it; the operator leaves it alone.
	ReasonObjectNotOwned = "ObjectNotOwned"
	// ReasonObjectRejected: the API server rejects an object built from the spec as invalid.
	ReasonObjectRejected = "ObjectRejected"
)

// Labels and annotations of the CoreOS etcd operator, kept so existing tooling works.
const (
	// ClusterLabel is on every member pod: `kubectl get po -l etcd_cluster=<name>`.
	ClusterLabel = "etcd_cluster"
	// ScopeAnnotation with value ScopeClusterWide marks a cluster for a --cluster-wide operator.
	ScopeAnnotation  = "etcd.database.coreos.com/scope"
	ScopeClusterWide = "clusterwide"
)

// Reasons of the operator's OperatorCondition Upgradeable (OLM holds an upgrade of the
// operator while it is False).
const (
	// ReasonMembershipChanging: some cluster is changing members or rolling a version.
	ReasonMembershipChanging = "MembershipChanging"
	// ReasonNoMembershipChange: no cluster is mid-operation; the operator may be replaced.
	ReasonNoMembershipChange = "NoMembershipChange"
)
