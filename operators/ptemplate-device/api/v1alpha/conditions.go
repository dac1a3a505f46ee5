package v1alpha

// A Ptemplate carries the conditions every Quintet kind has (shared/conditions): Ready is True
// when the Module and the consumer DaemonSet exist, some node has the kernel module loaded,
// and every consumer pod there is ready; Progressing is True while consumers are being
// scheduled or rolled; Degraded is True when the operator cannot make what the spec asks, or
// consumer pods cannot run. Its own reasons:
const (
	// ReasonKMMNotInstalled: the cluster has no KMM Module CRD; the Ptemplate waits for it.
	ReasonKMMNotInstalled = "KMMNotInstalled"
	// ReasonModuleNotLoaded: no node matching the selector has the kernel module loaded yet
	// (KMM's readiness label), so no consumer runs.
	ReasonModuleNotLoaded = "ModuleNotLoaded"
	// ReasonModuleNotAllowed: the spec asks for a kernel module, module image, device plugin
	// image or nodes the operator's administrator does not allow (the manager's
	// --kernel-modules, --device-plugin-images and --module-node-selector). No Module or
	// consumer is written; what the Ptemplate had stays as it was.
	ReasonModuleNotAllowed = "ModuleNotAllowed"
	// ReasonConsumersNotReady: some consumer pods are not ready yet.
	ReasonConsumersNotReady = "ConsumersNotReady"
)

// PtemplateLabel carries the name of the Ptemplate an object belongs to; its consumer pods
// carry it too.
const PtemplateLabel = "ptemplates.pt.example.com/ptemplate"
