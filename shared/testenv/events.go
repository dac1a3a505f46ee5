package testenv

import (
	"fmt"
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
	notes map[string][]string
}

// CountEvents wraps r.
func CountEvents(r recorder.EventRecorder) *EventCounter {
	return &EventCounter{EventRecorder: r, notes: map[string][]string{}}
}

// Emitted is how many Events with reason the controller emitted about obj.
func (e *EventCounter) Emitted(obj client.Object, reason string) int {
	return len(e.Notes(obj, reason))
}

// Notes are the notes of the Events with reason the controller emitted about obj, in order.
func (e *EventCounter) Notes(obj client.Object, reason string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.notes[eventKey(obj, reason)]...)
}

func (e *EventCounter) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	e.add(regarding, reason, fmt.Sprintf(note, args...))
	e.EventRecorder.Eventf(regarding, related, eventtype, reason, action, note, args...)
}

func (e *EventCounter) AnnotatedEventf(regarding, related runtime.Object, annotations map[string]string,
	eventtype, reason, action, note string, args ...any) {
	e.add(regarding, reason, fmt.Sprintf(note, args...))
	e.EventRecorder.AnnotatedEventf(regarding, related, annotations, eventtype, reason, action, note, args...)
}

func (e *EventCounter) add(regarding runtime.Object, reason, note string) {
	obj, ok := regarding.(client.Object)
	if !ok {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	key := eventKey(obj, reason)
	e.notes[key] = append(e.notes[key], note)
}

func eventKey(obj client.Object, reason string) string {
	return obj.GetNamespace() + "/" + obj.GetName() + "/" + reason
}
