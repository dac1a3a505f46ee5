package ensure

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// ChangeSet is what one reconcile pass wrote, for one Event per reason on the owner when the
// pass ends ("Created Secret a, Service b, StatefulSet c"), as flux's controllers report the
// change set of an apply. An Event per write made 11,000 Events for 1000 new Runtimes: as many
// POSTs, and as many Events held in the manager's memory, which client-go's recorder keeps 6
// to 12 minutes to count repeats.
type ChangeSet struct {
	mu      sync.Mutex
	written map[string][]written // by reason: EventCreated, EventUpdated
}

// written is one object a pass wrote.
type written struct {
	kind string
	obj  client.Object
}

type changeSetKey struct{}

// WithChangeSet returns ctx carrying a new ChangeSet: a Writer's Ensure given that context
// adds its writes to it instead of recording an Event for each. The pass records them with
// Record when it ends, whatever its outcome.
func WithChangeSet(ctx context.Context) (context.Context, *ChangeSet) {
	c := newChangeSet()
	return context.WithValue(ctx, changeSetKey{}, c), c
}

func newChangeSet() *ChangeSet { return &ChangeSet{written: map[string][]written{}} }

// changeSetFrom is the ChangeSet ctx carries, or nil.
func changeSetFrom(ctx context.Context) *ChangeSet {
	c, _ := ctx.Value(changeSetKey{}).(*ChangeSet)
	return c
}

func (c *ChangeSet) add(reason, kind string, obj client.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.written[reason] = append(c.written[reason], written{kind: kind, obj: obj})
}

// maxEventNote is what an Event's note may hold (events.k8s.io/v1 refuses more than 1 kB).
const maxEventNote = 1024

// Record records on owner one Normal Event per reason of what the pass wrote, the objects in
// the order written; one object written for a reason is the Event's related object. It
// records nothing when the pass wrote nothing (r may then be nil).
func (c *ChangeSet) Record(r recorder.EventRecorder, owner client.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, reason := range []string{EventCreated, EventUpdated} {
		objs := c.written[reason]
		if len(objs) == 0 || r == nil {
			continue
		}
		var related client.Object
		if len(objs) == 1 {
			related = objs[0].obj
		}
		r.Eventf(owner, related, corev1.EventTypeNormal, reason, reason, "%s", changeNote(reason, objs))
	}
	clear(c.written)
}

// changeNote is "<reason> <kind> <name>, <kind> <name>, ...", cut to fit an Event's note with
// how many objects it leaves out.
func changeNote(reason string, objs []written) string {
	const room = len(" and 1000000 more")
	var b strings.Builder
	b.WriteString(reason)
	for i, o := range objs {
		item := fmt.Sprintf(" %s %s", o.kind, o.obj.GetName())
		if i > 0 {
			item = "," + item
		}
		if b.Len()+len(item)+room > maxEventNote {
			fmt.Fprintf(&b, " and %d more", len(objs)-i)
			break
		}
		b.WriteString(item)
	}
	return b.String()
}
