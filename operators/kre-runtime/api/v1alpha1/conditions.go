package v1alpha1

// Runtimes and RuntimeVersions carry the conditions every Quintet kind has
// (shared/conditions): Ready is True when every component (Runtime) or every Deployment
// (RuntimeVersion) is ready; Progressing is True while they are created, rolled or scaled;
// Degraded is True when the operator cannot make what the spec asks, or pods cannot run.
// And one of their own:
const (
	// InlineCredentialsCondition is True when the Runtime carries credentials inline, where
	// anyone who can read Runtimes can read them.
	InlineCredentialsCondition = "InlineCredentials" //nolint:gosec // a condition type, not a credential
)

// Condition reasons, besides the shared ones.
const (
	// ReasonComponentsNotReady: some component's replicas are not ready yet.
	ReasonComponentsNotReady = "ComponentsNotReady"
	// ReasonNodesNotReady: some Deployment of a RuntimeVersion is not ready yet.
	ReasonNodesNotReady = "NodesNotReady"
	// ReasonStopped: the RuntimeVersion is Stopped; everything is scaled to zero.
	ReasonStopped = "Stopped"
	// ReasonRuntimeNotFound: the RuntimeVersion's runtimeRef names no Runtime (yet).
	ReasonRuntimeNotFound = "RuntimeNotFound"
	// ReasonWaitingForDependencies: the RuntimeVersion is starting and some server of its
	// Runtime (NATS, MongoDB, MinIO) does not answer its readiness probe yet; the entrypoint
	// and nodes are scaled to zero until every one does. A version that has started keeps
	// running while a server restarts.
	ReasonWaitingForDependencies = "WaitingForDependencies"
	// ReasonRuntimeNotReady: the RuntimeVersion's Runtime has not reported its credentials
	// Secrets yet (waiting for its servers is ReasonWaitingForDependencies).
	ReasonRuntimeNotReady = "RuntimeNotReady"
	// ReasonInlineCredentials: spec carries credentials inline.
	ReasonInlineCredentials = "InlineCredentials" //nolint:gosec // a reason, not a credential
	// ReasonEntrypointNotAllowed: entrypoint.host or entrypoint.ingressClassName is not one
	// the operator's administrator allows (--entrypoint-hosts, --ingress-classes); no Ingress
	// routes to the entrypoint.
	ReasonEntrypointNotAllowed = "EntrypointNotAllowed"
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
