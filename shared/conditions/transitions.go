package conditions

import (
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// Transitions emits the Event of a condition whose True means trouble (negative polarity:
// Degraded, kre-runtime's InlineCredentials) when it transitions: a Warning when it turns True or fails for another reason, a Normal Event when
// it turns False after being True. A failure that lasts many passes is one Event, not one per
// pass. It remembers what it last reported for each object, so a pass that reads an object
// the cache has not yet updated does not report the same transition again. The zero value is
// ready to use; a controller keeps one for its kind.
type Transitions struct {
	mu   sync.Mutex
	last map[string]reported // namespace/name/type -> last reported
}

// reported is what a transition is told by: a condition's status and reason (its message is
// not kept: at a thousand objects it was most of what Transitions held).
type reported struct {
	status metav1.ConditionStatus
	reason string
}

// Record reports obj's negative-polarity condition of that type if it transitioned since it
// was last reported, or (the first time the object is seen) since before, obj's conditions as
// read. The status patcher calls it (status.WithEvents).
func (t *Transitions) Record(r recorder.EventRecorder, obj Object, before []metav1.Condition, conditionType string) {
	now := Get(obj, conditionType)
	if now == nil {
		return
	}
	key := obj.GetNamespace() + "/" + obj.GetName() + "/" + conditionType
	t.mu.Lock()
	was, seen := t.last[key]
	if t.last == nil {
		t.last = map[string]reported{}
	}
	is := reported{now.Status, now.Reason}
	t.last[key] = is
	t.mu.Unlock()
	if !seen {
		if c := meta.FindStatusCondition(before, conditionType); c != nil {
			was, seen = reported{c.Status, c.Reason}, true
		}
	}
	switch {
	case seen && was == is:
	case now.Status == metav1.ConditionTrue:
		r.Eventf(obj, nil, corev1.EventTypeWarning, now.Reason, "Reconcile", "%s", now.Message)
	case seen && was.status == metav1.ConditionTrue:
		r.Eventf(obj, nil, corev1.EventTypeNormal, now.Reason, "Reconcile", "%s", now.Message)
	}
}

// Forget drops what was reported of an object that is gone.
func (t *Transitions) Forget(namespace, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	prefix := namespace + "/" + name + "/"
	for key := range t.last {
		if strings.HasPrefix(key, prefix) {
			delete(t.last, key)
		}
	}
}
