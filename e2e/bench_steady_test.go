//go:build bench

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// copyState is what a copy of the sample holds at one moment: its resourceVersion and its
// status as JSON.
type copyState struct {
	resourceVersion string
	status          string
}

// steadyWrites says what a manager wrote in a window that should have none, as the API server
// shows it afterwards: how many copies changed (and the first one's status before and after),
// and the Events about copies sent or repeated in the window, by type and reason. The
// request counts say how much was written; this says what.
type steadyWrites struct {
	changed         int
	example         string
	eventsByReasons map[string]int
}

// snapshotCopies is each copy of sample's state, by namespace/name.
func snapshotCopies(ctx context.Context, t *testing.T, c client.Client, sample *unstructured.Unstructured) map[string]copyState {
	out := map[string]copyState{}
	for _, u := range listCopies(ctx, t, c, sample) {
		status, err := json.Marshal(u.Object["status"])
		must(t, err)
		out[u.GetNamespace()+"/"+u.GetName()] = copyState{resourceVersion: u.GetResourceVersion(), status: string(status)}
	}
	return out
}

// steadyWritesSince compares the copies with before, and lists the Events about them since start.
func steadyWritesSince(ctx context.Context, t *testing.T, c client.Client, sample *unstructured.Unstructured,
	before map[string]copyState, start time.Time) steadyWrites {
	w := steadyWrites{eventsByReasons: map[string]int{}}
	after := snapshotCopies(ctx, t, c, sample)
	for _, key := range slices.Sorted(maps.Keys(after)) {
		was, now := before[key], after[key]
		if was.resourceVersion == now.resourceVersion {
			continue
		}
		w.changed++
		if w.example == "" {
			w.example = fmt.Sprintf("%s: status %s\n  became %s", key, was.status, now.status)
		}
	}
	events := &eventsv1.EventList{}
	must(t, c.List(ctx, events))
	for _, e := range events.Items {
		last := e.EventTime.Time
		if e.Series != nil {
			last = e.Series.LastObservedTime.Time
		}
		if e.Regarding.Kind == sample.GetKind() && !last.Before(start) {
			w.eventsByReasons[e.Type+" "+e.Reason]++
		}
	}
	return w
}

func (w steadyWrites) String() string {
	if w.changed == 0 && len(w.eventsByReasons) == 0 {
		return "no copy changed, no Event"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d copies changed; Events by reason: %v", w.changed, w.eventsByReasons)
	if w.example != "" {
		fmt.Fprintf(&b, "\n  the first: %s", w.example)
	}
	return b.String()
}
