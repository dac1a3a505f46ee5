package conditions

// The condition types every Quintet kind carries. Ready has positive polarity (True is good)
// and summarises the other two, which have negative polarity (True needs a look): see
// SetSummary. Each operator's API package says what they mean for its kinds.
const (
	// ReadyCondition is True when the object's workloads run as its spec asks.
	ReadyCondition = "Ready"
	// ProgressingCondition is True while the operator creates, changes or rolls what the
	// object asks for, or waits for it to become ready.
	ProgressingCondition = "Progressing"
	// DegradedCondition is True when the operator cannot make what the spec asks, or what it
	// made cannot run: something needs attention.
	DegradedCondition = "Degraded"
)

// The reasons two or more operators use; an operator declares only its own.
const (
	// ReasonReady: everything the spec asks for runs and is ready (Ready).
	ReasonReady = "Ready"
	// ReasonStable: nothing is changing (Progressing False).
	ReasonStable = "Stable"
	// ReasonAsExpected: nothing is wrong (Degraded False).
	ReasonAsExpected = "AsExpected"
	// ReasonPodsFailing: a pod cannot run for a reason of its spec or image: a crash loop, an
	// image that cannot be pulled, a Secret or key that is missing (Degraded True).
	ReasonPodsFailing = "PodsFailing"
	// ReasonObjectNotOwned: an object the operator would make exists under its name and
	// belongs to someone else; the operator neither adopts nor overwrites it (Degraded True).
	ReasonObjectNotOwned = "ObjectNotOwned"
	// ReasonObjectRejected: the API server rejected an object the operator built from the
	// spec as invalid; the same spec fails again (Degraded True).
	ReasonObjectRejected = "ObjectRejected"
	// ReasonReconcileFailed: a read or write failed; the operator retries (Degraded True).
	ReasonReconcileFailed = "ReconcileFailed"
)
