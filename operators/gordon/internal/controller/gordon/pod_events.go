package gordon

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/quintet-operators/quintet/operators/gordon/api/v1"
)

// podEventHandler enqueues the Gordon that controls a pod, and tells the expectations that
// the cache now shows a pod's creation or deletion.
type podEventHandler struct {
	expectations *expectations
}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// ownerRequest returns the reconcile request of the Gordon controlling obj.
func ownerRequest(obj client.Object) (reconcile.Request, bool) {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != "Gordon" || ref.APIVersion != v1.GroupVersion.String() {
		return reconcile.Request{}, false
	}
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}}, true
}

func (h *podEventHandler) Create(_ context.Context, e event.CreateEvent, q queue) {
	if req, ok := ownerRequest(e.Object); ok {
		h.expectations.creationObserved(req.String())
		q.Add(req)
	}
}

func (h *podEventHandler) Update(_ context.Context, e event.UpdateEvent, q queue) {
	req, ok := ownerRequest(e.ObjectNew)
	if !ok {
		return
	}
	// A pod that starts terminating counts as deleted, as in the ReplicaSet controller.
	if e.ObjectNew.GetDeletionTimestamp() != nil && e.ObjectOld.GetDeletionTimestamp() == nil {
		h.expectations.deletionObserved(req.String(), client.ObjectKeyFromObject(e.ObjectNew).String())
	}
	q.Add(req)
}

func (h *podEventHandler) Delete(_ context.Context, e event.DeleteEvent, q queue) {
	if req, ok := ownerRequest(e.Object); ok {
		h.expectations.deletionObserved(req.String(), client.ObjectKeyFromObject(e.Object).String())
		q.Add(req)
	}
}

func (h *podEventHandler) Generic(_ context.Context, e event.GenericEvent, q queue) {
	if req, ok := ownerRequest(e.Object); ok {
		q.Add(req)
	}
}
