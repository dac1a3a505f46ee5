// Package status writes an object's status once per reconcile, and only when it changed, and
// records the Events of the condition transitions that write carries (model: fluxcd
// source-controller's summarize helper).
//
//	patcher := status.NewPatcher(obj, status.WithEvents(r.Recorder, &r.transitions, conditions.DegradedCondition))
//	defer func() { res, reterr = patcher.Finish(ctx, c, obj, res, reterr) }()
package status

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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

// staleReadRetry is how soon a pass that wrote a status computed from a stale read runs
// again: time for the cache to catch up with the write it had not seen.
const staleReadRetry = 100 * time.Millisecond

// ErrStaleRead says that the status on the server after the patch is not the one the pass
// computed: the pass read its object before a write it did not see (a cache not yet up to
// date), and a merge patch leaves the fields the pass computed as it read them at the values
// of that write.
var ErrStaleRead = errors.New("the status written is not the one computed: the pass read a stale object")

// Finish ends a pass: it patches obj's status (Patch) and returns the pass's result and error
// joined with the patch's. A status written from a stale read (ErrStaleRead) is no error:
// the pass runs again shortly on the object as it now is (a change of status alone may start
// none), and what this pass recorded (a defragmentation it did) was written, not lost.
func (p *Patcher) Finish(ctx context.Context, c client.Client, obj client.Object, res reconcile.Result, err error) (reconcile.Result, error) {
	perr := p.Patch(ctx, c, obj)
	if errors.Is(perr, ErrStaleRead) {
		logf.FromContext(ctx).V(1).Info("Status written from a stale read; running the pass again")
		return reconcile.Result{RequeueAfter: staleReadRetry}, err
	}
	return res, kerrors.NewAggregate([]error{err, perr})
}

// Patch records the Events of the conditions that transitioned (WithEvents), then sends a
// JSON merge patch of obj's status against the snapshot, with a log line as every write of
// a reconciler has. It makes no request (and logs nothing) when the status is unchanged, and
// ignores an object deleted in the meantime. It returns ErrStaleRead when the status the
// API server returns is not the one computed.
func (p *Patcher) Patch(ctx context.Context, c client.Client, obj client.Object) error {
	p.recordTransitions(obj)
	read, err := statusJSON(p.before)
	if err != nil {
		return err
	}
	computed, err := statusJSON(obj)
	if err != nil || bytes.Equal(read, computed) {
		return err
	}
	logf.FromContext(ctx).Info("Patching status")
	if err := c.Status().Patch(ctx, obj, client.MergeFrom(p.before)); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("patching status of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	written, err := statusJSON(obj) // obj is now as the API server returned it
	if err != nil {
		return err
	}
	if !bytes.Equal(computed, written) {
		return ErrStaleRead
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

// statusJSON is obj's status as JSON: as the API server stores it (times to the second).
func statusJSON(obj client.Object) ([]byte, error) {
	var fields struct {
		Status json.RawMessage `json:"status"`
	}
	data, err := json.Marshal(obj)
	if err == nil {
		err = json.Unmarshal(data, &fields)
	}
	if err != nil {
		return nil, fmt.Errorf("reading status of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	return fields.Status, nil
}
