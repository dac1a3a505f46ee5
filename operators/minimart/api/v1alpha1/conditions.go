package v1alpha1

// A Minimart carries the conditions every Quintet kind has (shared/conditions): Ready is True
// when the release is deployed at the spec's generation and its Deployment is available;
// Progressing is True while a release is installed or upgraded, or its Deployment rolls out;
// Degraded is True when the operator cannot make the release the spec asks for. Its own
// reasons:
const (
	// ReasonReleaseDeployed: Helm installed or upgraded the release; its Deployment is not
	// available yet.
	ReasonReleaseDeployed = "ReleaseDeployed"
	// ReasonDeploymentNotAvailable: the release is deployed; its Deployment is not available.
	ReasonDeploymentNotAvailable = "DeploymentNotAvailable"
	// ReasonReleaseFailed: Helm failed to install or upgrade the release; the message is
	// Helm's. The operator retries with backoff and never rolls back.
	ReasonReleaseFailed = "ReleaseFailed"
	// ReasonReleaseRecovered: a release left pending by an interrupted operation (a manager
	// killed mid-upgrade, or a pending revision of another client's older than five minutes)
	// was marked failed so that the next upgrade can proceed.
	ReasonReleaseRecovered = "ReleaseRecovered"
	// ReasonOtherOperation: another client (the helm CLI) is operating on the release
	// (uninstalling, rolling back, upgrading); the operator waits for it to end, then brings
	// the release back to the spec.
	ReasonOtherOperation = "OtherOperationInProgress"
	// ReasonReleaseUntrusted: a stored revision of the release reaches outside the
	// Minimart's namespace (a Secret the operator did not write: its manifest names another
	// namespace's or cluster-scoped objects, or it is another namespace's release). The
	// operator acts on no revision of the release until that Secret is removed; it looks
	// again with back-off.
	ReasonReleaseUntrusted = "ReleaseUntrusted"
	// ReasonDriftRestored: an object of the release was deleted or edited; the operator put
	// it back as the release has it, without a new revision.
	ReasonDriftRestored = "DriftRestored"
	// ReasonNamespaceTerminating: the Minimart's namespace is being deleted, and its deletion
	// deletes the release's objects and revisions before the Minimart. The API server
	// refuses new objects there, so the operator neither restores nor installs the release
	// again, and tries nothing more until the Minimart itself is deleted.
	ReasonNamespaceTerminating = "NamespaceTerminating"
)

// Reasons of Events that are not conditions' (those are the reasons above).
const (
	// EventInstalled: Helm installed the release.
	EventInstalled = "Installed"
	// EventUpgraded: Helm upgraded the release to a new revision.
	EventUpgraded = "Upgraded"
	// EventUninstalled: Helm uninstalled the release of a deleted Minimart.
	EventUninstalled = "Uninstalled"
)

// Names the operator puts on what it makes.
const (
	// MinimartLabel carries the name of the Minimart an object of its release belongs to
	// (the operator's post-renderer adds it, with the owner reference).
	MinimartLabel = "charts.samutup.com/minimart"
	// Finalizer holds a Minimart until its release is uninstalled.
	Finalizer = "charts.samutup.com/uninstall-release"
)
