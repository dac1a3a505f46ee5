// Package status writes an object's status once per reconcile, and only when it changed, and
// records the Events of the condition transitions that write carries (model: fluxcd
// source-controller's summarize helper).
//
//	patcher := status.NewPatcher(obj, status.WithEvents(r.Recorder, &r.transitions, conditions.DegradedCondition))
//	defer func() { res, reterr = patcher.Finish(ctx, c, obj, res, reterr) }()
package status

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/quintet-operators/quintet/shared/conditions"
)

// Patcher remembers an object as it was read, to patch its status at the end of a pass, and
// which conditions' transitions to report (WithEvents).
type Patcher struct {
	before      client.Object
	recorder    recorder.EventRecorder
	transitions *conditions.Transitions
	types       []string
	kind        string // WithConditionMetrics
}

// Option adds to what a Patcher does.
type Option func(*Patcher)

// WithEvents records an Event when one of the negative-polarity conditions types (Degraded,
// ...) transitions, once per transition (conditions.Transitions): transitions is the
// controller's, kept across passes.
func WithEvents(r recorder.EventRecorder, transitions *conditions.Transitions, types ...string) Option {
	return func(p *Patcher) { p.recorder, p.transitions, p.types = r, transitions, types }
}

// NewPatcher snapshots obj.
func NewPatcher(obj client.Object, opts ...Option) *Patcher {
	p := &Patcher{before: obj.DeepCopyObject().(client.Object)}
	for _, o := range opts {
		o(p)
	}
	return p
}

// staleReadRetry is how soon a pass whose status was refused runs again: time for the cache
// to catch up with the change it had not seen.
const staleReadRetry = 100 * time.Millisecond

// Finish ends a pass: it patches obj's status (Patch) and returns the pass's result and error
// joined with the patch's. A status refused because obj changed since the pass read it (a
// cache that had not yet seen the last write, another writer) is no error: the pass runs
// again shortly on the object as it now is, since a change of status alone may start none.
func (p *Patcher) Finish(ctx context.Context, c client.Client, obj client.Object, res reconcile.Result, err error) (reconcile.Result, error) {
	perr := p.Patch(ctx, c, obj)
	if apierrors.IsConflict(perr) {
		logf.FromContext(ctx).V(1).Info("Status not written: the object changed since the pass read it; running it again")
		return reconcile.Result{RequeueAfter: staleReadRetry}, err
	}
	return res, kerrors.NewAggregate([]error{err, perr})
}

// Patch records the Events of the conditions that transitioned (WithEvents) and exports the
// conditions (WithConditionMetrics), then sends a
// JSON merge patch of obj's status against the snapshot, with a log line as every write of
// a reconciler has. It makes no request (and logs nothing) when the status is unchanged, and
// ignores an object deleted in the meantime.
//
// The patch carries the resourceVersion the pass last saw of obj (as read, or as its own
// writes of obj returned it). A status computed from an older object is refused with a
// Conflict rather than merged: a merge patch holds only the fields that differ from what the
// pass read, so one computed from a stale read would leave stale fields in place.
func (p *Patcher) Patch(ctx context.Context, c client.Client, obj client.Object) error {
	p.recordTransitions(obj)
	if o, ok := obj.(conditions.Object); ok && p.kind != "" {
		recordConditions(p.kind, o)
	}
	before := p.before.DeepCopyObject().(client.Object)
	before.SetResourceVersion(obj.GetResourceVersion())
	patch := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
	changed, err := statusChanged(patch, obj)
	if err != nil || !changed {
		return err
	}
	logf.FromContext(ctx).Info("Patching status")
	if err := c.Status().Patch(ctx, obj, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("patching status of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

func (p *Patcher) recordTransitions(obj client.Object) {
	now, ok := obj.(conditions.Object)
	before, okBefore := p.before.(conditions.Setter)
	if p.transitions == nil || !ok || !okBefore {
		return
	}
	for _, t := range p.types {
		p.transitions.Record(p.recorder, now, before.GetConditions(), t)
	}
}

// statusChanged reports whether the merge patch touches .status.
func statusChanged(patch client.Patch, obj client.Object) (bool, error) {
	data, err := patch.Data(obj)
	if err != nil {
		return false, fmt.Errorf("computing status patch: %w", err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return false, fmt.Errorf("reading status patch: %w", err)
	}
	_, ok := fields["status"]
	return ok, nil
}
