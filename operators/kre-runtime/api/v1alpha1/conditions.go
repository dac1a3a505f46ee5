package v1alpha1

// Condition types of Runtimes and RuntimeVersions.
const (
	// ReadyCondition is True when every component (Runtime) or every Deployment
	// (RuntimeVersion) is ready.
	ReadyCondition = "Ready"
	// ProgressingCondition is True while components are created, rolled or scaled.
	ProgressingCondition = "Progressing"
	// DegradedCondition is True when the operator cannot make what the spec asks.
	DegradedCondition = "Degraded"
	// InlineCredentialsCondition is True when the Runtime carries credentials inline, where
	// anyone who can read Runtimes can read them.
	InlineCredentialsCondition = "InlineCredentials" //nolint:gosec // a condition type, not a credential
)

// Condition reasons.
const (
	// ReasonReady: everything the spec asks for runs and is ready.
	ReasonReady = "Ready"
	// ReasonStable: nothing is changing.
	ReasonStable = "Stable"
	// ReasonComponentsNotReady: some component's replicas are not ready yet.
	ReasonComponentsNotReady = "ComponentsNotReady"
	// ReasonNodesNotReady: some Deployment of a RuntimeVersion is not ready yet.
	ReasonNodesNotReady = "NodesNotReady"
	// ReasonStopped: the RuntimeVersion is Stopped; everything is scaled to zero.
	ReasonStopped = "Stopped"
	// ReasonRuntimeNotFound: the RuntimeVersion's runtimeRef names no Runtime (yet).
	ReasonRuntimeNotFound = "RuntimeNotFound"
	// ReasonRuntimeNotReady: the RuntimeVersion's Runtime is not Ready yet.
	ReasonRuntimeNotReady = "RuntimeNotReady"
	// ReasonPodsFailing: a pod cannot run for a reason of its spec or image: a crash loop, an
	// image that cannot be pulled, a Secret (a secretRef's) or key that is missing.
	ReasonPodsFailing = "PodsFailing"
	// ReasonObjectNotOwned: an object the operator would make exists and belongs to
	// someone else (another Runtime in the namespace, a user).
	ReasonObjectNotOwned = "ObjectNotOwned"
	// ReasonObjectRejected: the API server rejected an object the operator made as invalid.
	ReasonObjectRejected = "ObjectRejected"
	// ReasonReconcileFailed: a write or read failed; the operator retries.
	ReasonReconcileFailed = "ReconcileFailed"
	// ReasonAsExpected: nothing is wrong.
	ReasonAsExpected = "AsExpected"
	// ReasonInlineCredentials: spec carries credentials inline.
	ReasonInlineCredentials = "InlineCredentials" //nolint:gosec // a reason, not a credential
	// ReasonCredentialsFromSecrets: credentials come from Secrets only.
	ReasonCredentialsFromSecrets = "CredentialsFromSecrets"
)

// Labels on what the operator makes.
const (
	// RuntimeLabel carries the name of the Runtime an object belongs to.
	RuntimeLabel = "kre.konstellation.io/runtime"
	// VersionLabel carries the name of the RuntimeVersion an object belongs to.
	VersionLabel = "kre.konstellation.io/version"
	// ComponentLabel names the component (mongo, nats, minio, entrypoint, or a node).
	ComponentLabel = "kre.konstellation.io/component"
)
