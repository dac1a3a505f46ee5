package ptemplate

import (
	"context"
	"strings"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// nodeEvents enqueues the Ptemplates whose module KMM reports loaded or unloaded on a node:
// the Ptemplates of the readiness labels an event adds or removes. Other node updates
// (status, heartbeats, other labels) enqueue nothing.
var nodeEvents = handler.Funcs{
	CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		enqueueModuleLabels(q, e.Object.GetLabels(), nil)
	},
	UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		enqueueModuleLabels(q, e.ObjectNew.GetLabels(), e.ObjectOld.GetLabels())
		enqueueModuleLabels(q, e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels())
	},
	DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		enqueueModuleLabels(q, e.Object.GetLabels(), nil)
	},
}

// enqueueModuleLabels enqueues the Ptemplate of each module readiness label in labels that
// other lacks.
func enqueueModuleLabels(q workqueue.TypedRateLimitingInterface[reconcile.Request], labels, other map[string]string) {
	for key := range labels {
		if _, both := other[key]; both {
			continue
		}
		if key, ok := ptemplateOfModuleLabel(key); ok {
			q.Add(reconcile.Request{NamespacedName: key})
		}
	}
}

// ptemplateOfModuleLabel reads the namespace and name out of a label ModuleReadyLabel made.
func ptemplateOfModuleLabel(label string) (client.ObjectKey, bool) {
	rest, ok := strings.CutPrefix(label, moduleLabelPrefix)
	if !ok {
		return client.ObjectKey{}, false
	}
	rest, ok = strings.CutSuffix(rest, moduleLabelSuffix)
	if !ok {
		return client.ObjectKey{}, false
	}
	// Namespaces hold no dots; Ptemplate names may.
	namespace, name, ok := strings.Cut(rest, ".")
	return client.ObjectKey{Namespace: namespace, Name: name}, ok && namespace != "" && name != ""
}
