package v1

// A Gordon carries the conditions every Quintet kind has (shared/conditions): Ready is True
// when the desired number of pods run and are Ready; Progressing is True while pods are being
// created, removed, rolled or becoming Ready; Degraded is True when the last attempt to create
// or delete pods failed, or pods keep failing (PodsFailing: terminated, crash-looping, image
// not pulled; terminated ones are replaced after a growing back-off). Its own reasons:
const (
	// ReasonAllPodsReady: every desired pod runs and is Ready.
	ReasonAllPodsReady = "AllPodsReady"
	// ReasonPodsNotReady: the pods exist but not all are Ready.
	ReasonPodsNotReady = "PodsNotReady"
	// ReasonScalingUp: fewer pods than desired.
	ReasonScalingUp = "ScalingUp"
	// ReasonScalingDown: more pods than desired.
	ReasonScalingDown = "ScalingDown"
	// ReasonRollingUpdate: some pods run an older pod template and are being replaced.
	ReasonRollingUpdate = "RollingUpdate"
	// ReasonPodCreateFailed: the API server refused to create a pod.
	ReasonPodCreateFailed = "PodCreateFailed"
	// ReasonPodDeleteFailed: the API server refused to delete a pod.
	ReasonPodDeleteFailed = "PodDeleteFailed"
)

// Event reasons of a Gordon, besides the failure reasons above.
const (
	// EventScaled: pods were created or deleted to match the spec.
	EventScaled = "Scaled"
	// EventPodReplaced: a terminated pod was removed so it can be replaced.
	EventPodReplaced = "PodReplaced"
)

// Labels on the pods of a Gordon.
const (
	// GordonLabel carries the name of the Gordon a pod belongs to:
	// `kubectl get pods -l operator.prgcont.cz/gordon=<name>`.
	GordonLabel = "operator.prgcont.cz/gordon"
	// TemplateHashLabel carries the hash of the pod template a pod was made from; pods with
	// another hash are outdated and rolled.
	TemplateHashLabel = "operator.prgcont.cz/pod-template-hash"
)
