package v1alpha

// Condition types of Ptemplates.
const (
	// ReadyCondition is True when the Module and the consumer DaemonSet exist, some node has
	// the kernel module loaded, and every consumer pod there is ready.
	ReadyCondition = "Ready"
	// ProgressingCondition is True while consumers are being scheduled or rolled.
	ProgressingCondition = "Progressing"
	// DegradedCondition is True when the operator cannot make what the spec asks, or
	// consumer pods cannot run.
	DegradedCondition = "Degraded"
)

// Condition reasons.
const (
	// ReasonReady: the module is loaded somewhere and every consumer there is ready.
	ReasonReady = "Ready"
	// ReasonStable: nothing is changing.
	ReasonStable = "Stable"
	// ReasonKMMNotInstalled: the cluster has no KMM Module CRD; the Ptemplate waits for it.
	ReasonKMMNotInstalled = "KMMNotInstalled"
	// ReasonModuleNotLoaded: no node matching the selector has the kernel module loaded yet
	// (KMM's readiness label), so no consumer runs.
	ReasonModuleNotLoaded = "ModuleNotLoaded"
	// ReasonConsumersNotReady: some consumer pods are not ready yet.
	ReasonConsumersNotReady = "ConsumersNotReady"
	// ReasonPodsFailing: a consumer pod cannot run (image pull, crash loop, ...).
	ReasonPodsFailing = "PodsFailing"
	// ReasonObjectNotOwned: the Module or DaemonSet of the Ptemplate's name exists and belongs
	// to someone else.
	ReasonObjectNotOwned = "ObjectNotOwned"
	// ReasonObjectRejected: the API server rejected an object the operator made as invalid.
	ReasonObjectRejected = "ObjectRejected"
	// ReasonReconcileFailed: a write or read failed; the operator retries.
	ReasonReconcileFailed = "ReconcileFailed"
	// ReasonAsExpected: nothing is wrong.
	ReasonAsExpected = "AsExpected"
)

// PtemplateLabel carries the name of the Ptemplate an object belongs to; its consumer pods
// carry it too.
const PtemplateLabel = "ptemplates.pt.example.com/ptemplate"
