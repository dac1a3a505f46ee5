package testenv

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// EventCounter is a controller's event recorder that counts what it is asked to emit, per
// object and reason, before the broadcaster folds repeats into one Event's series: what a
// test of "an Event on a transition, not on every pass" must count.
type EventCounter struct {
	recorder.EventRecorder
	mu    sync.Mutex
	count map[string]int
}

// CountEvents wraps r.
func CountEvents(r recorder.EventRecorder) *EventCounter {
	return &EventCounter{EventRecorder: r, count: map[string]int{}}
}

// Emitted is how many Events with reason the controller emitted about obj.
func (e *EventCounter) Emitted(obj client.Object, reason string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.count[eventKey(obj, reason)]
}

func (e *EventCounter) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	e.add(regarding, reason)
	e.EventRecorder.Eventf(regarding, related, eventtype, reason, action, note, args...)
}

func (e *EventCounter) AnnotatedEventf(regarding, related runtime.Object, annotations map[string]string,
	eventtype, reason, action, note string, args ...any) {
	e.add(regarding, reason)
	e.EventRecorder.AnnotatedEventf(regarding, related, annotations, eventtype, reason, action, note, args...)
}

func (e *EventCounter) add(regarding runtime.Object, reason string) {
	obj, ok := regarding.(client.Object)
	if !ok {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.count[eventKey(obj, reason)]++
}

func eventKey(obj client.Object, reason string) string {
	return obj.GetNamespace() + "/" + obj.GetName() + "/" + reason
}
