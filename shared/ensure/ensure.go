// Package ensure creates the objects an operator owns, or brings the fields it manages up to
// date, without adopting or overwriting what belongs to someone else, and records Normal
// Events on the owner of what it wrote: one per reason and pass (ChangeSet).
package ensure

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// Reasons of the Events a Writer records on the owner.
const (
	// EventCreated: the operator created an object the owner needs.
	EventCreated = "Created"
	// EventUpdated: the operator brought the fields it manages of an object up to date.
	EventUpdated = "Updated"
)

// NotOwnedError: an object the owner needs exists, but the owner does not control it. The
// operator neither adopts nor overwrites it; the user deletes or renames it.
type NotOwnedError struct {
	Kind, Name string
	// Controller says who controls it, if anyone.
	Controller string
	// Labels are the labels of the object found: an operator's own label there says which of
	// its objects made it.
	Labels map[string]string
}

func (e *NotOwnedError) Error() string {
	return fmt.Sprintf("%s %s already exists and %s: the operator neither adopts nor overwrites it; delete or rename it",
		e.Kind, e.Name, e.Controller)
}

// IsNotOwned reports whether err is (or wraps) a NotOwnedError, and returns it.
func IsNotOwned(err error) (*NotOwnedError, bool) {
	var notOwned *NotOwnedError
	ok := errors.As(err, &notOwned)
	return notOwned, ok
}

// Writer writes an operator's objects. Client is the manager's (cached) client; APIReader
// reads past the cache, which holds only the operator's labelled objects (the manager's
// APIReader; Client when nil); Recorder, when set, records on the owner the Event of each
// create and update made outside a pass that collects them (WithChangeSet); Checked, when set,
// names the kinds the cache holds as metadata alone, and remembers the versions of those
// objects found as the operator wants them.
type Writer struct {
	Client    client.Client
	APIReader client.Reader
	Recorder  recorder.EventRecorder
	Checked   *CheckedVersions
}

// Ensure creates desired, controller-owned by owner, or brings the fields the operator
// manages (see CopyManagedFields) up to date. It writes nothing when they already match
// (server defaults are not a change; an object with a large spec is compared whole only when
// its AppliedSpecAnnotation no longer matches, and an object of a kind w.Checked covers only
// when it changed since it was last found as wanted), logs one line per write and adds it to
// the pass's ChangeSet (an Event of its own when ctx carries none), and refuses
// (NotOwnedError) an object of that name owner does not control. The API server's Invalid is
// terminal (reconcile.TerminalError): the object is built from the spec, so the same spec
// fails again.
func (w Writer) Ensure(ctx context.Context, owner, desired client.Object) error {
	gvk, err := w.Client.GroupVersionKindFor(desired)
	if err != nil {
		return err
	}
	kind, key := gvk.Kind, client.ObjectKeyFromObject(desired)
	if err := controllerutil.SetControllerReference(owner, desired, w.Client.Scheme()); err != nil {
		return err
	}
	hash, err := specHash(desired)
	if err != nil {
		return err
	}
	if hash != "" {
		setApplied(desired, hash, 1) // the API server creates an object at generation 1
	}
	checked := w.Checked.covers(gvk)
	var wanted wantedSum
	if checked {
		if wanted, err = wantedHash(desired); err != nil {
			return err
		}
	}
	log := ctrl.LoggerFrom(ctx).WithValues(kind, klog.KObj(desired))
	existing := desired.DeepCopyObject().(client.Object)
	if checked {
		existing = metadataOf(gvk)
	}
	err = w.Client.Get(ctx, key, existing)
	if apierrors.IsNotFound(err) {
		if err = w.Client.Create(ctx, desired); !apierrors.IsAlreadyExists(err) {
			// Logged once the API server answered: a create that finds the object made by an
			// earlier pass (the cache had not seen it yet) wrote nothing.
			log.Info("Creating " + kind)
			if err == nil && checked {
				w.Checked.record(desired, wanted)
			}
			return w.recorded(ctx, owner, desired, EventCreated, kind, WriteError("creating", kind, desired, err))
		}
		// The cache holds only labelled objects: either it has not yet seen what an earlier
		// pass created, or the object is someone else's. The API server says.
		err = w.apiReader().Get(ctx, key, existing)
	}
	if err != nil {
		return fmt.Errorf("reading %s %s: %w", kind, desired.GetName(), err)
	}
	if !metav1.IsControlledBy(existing, owner) {
		ownerKind, err := w.Client.GroupVersionKindFor(owner)
		if err != nil {
			return err
		}
		return &NotOwnedError{Kind: kind, Name: desired.GetName(), Controller: controlledBy(existing, ownerKind.Kind), Labels: existing.GetLabels()}
	}
	switch {
	case hash != "" && asApplied(existing, hash), checked && w.Checked.asChecked(existing, wanted):
		return nil
	case hash != "" || checked:
		// The cache holds the object without its spec (SpecsOutOfCache) or as metadata
		// (Checked): compare it whole.
		existing = desired.DeepCopyObject().(client.Object)
		if err := w.apiReader().Get(ctx, key, existing); err != nil {
			return fmt.Errorf("reading %s %s: %w", kind, desired.GetName(), err)
		}
	}
	changed, err := CopyManagedFields(desired, existing)
	switch {
	case err != nil:
		return err
	case !changed && hash == "":
		if checked {
			w.Checked.record(existing, wanted)
		}
		return nil
	case !changed:
		return WriteError("annotating", kind, existing, w.recordApplied(ctx, existing, hash))
	}
	generation := existing.GetGeneration() + 1 // a change of its spec moves it by one
	if hash != "" {
		setApplied(existing, hash, generation)
	}
	log.Info("Updating " + kind)
	err = w.recorded(ctx, owner, existing, EventUpdated, kind, WriteError("updating", kind, existing, w.Client.Update(ctx, existing)))
	if err == nil && checked {
		w.Checked.record(existing, wanted)
	}
	if err != nil || hash == "" {
		return err
	}
	return WriteError("annotating", kind, existing, w.checkApplied(ctx, existing, generation))
}

// metadataOf is an object of gvk's metadata alone, to read from a cache that holds only that.
func metadataOf(gvk schema.GroupVersionKind) client.Object {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	return m
}

// recorded adds a write of obj, a kind, that succeeded (err is nil) to the pass's ChangeSet,
// or records its Event at once when ctx carries none, and returns err.
func (w Writer) recorded(ctx context.Context, owner, obj client.Object, reason, kind string, err error) error {
	if err != nil {
		return err
	}
	changes := changeSetFrom(ctx)
	if changes == nil {
		changes = newChangeSet()
		defer changes.Record(w.Recorder, owner)
	}
	changes.add(reason, kind, obj)
	return nil
}

func (w Writer) apiReader() client.Reader {
	if w.APIReader != nil {
		return w.APIReader
	}
	return w.Client
}

// controlledBy says who controls obj, for NotOwnedError.
func controlledBy(obj client.Object, ownerKind string) string {
	if ref := metav1.GetControllerOf(obj); ref != nil {
		return fmt.Sprintf("is controlled by %s %s (uid %s)", ref.Kind, ref.Name, ref.UID)
	}
	return "is controlled by no " + ownerKind
}

// WriteError wraps a failed write of obj, a kind. The API server's Invalid is terminal.
func WriteError(verb, kind string, obj client.Object, err error) error {
	if err == nil {
		return nil
	}
	err = fmt.Errorf("%s %s %s: %w", verb, kind, obj.GetName(), err)
	if apierrors.IsInvalid(err) {
		return reconcile.TerminalError(err)
	}
	return err
}

// NotOwnedRecheck is how often a pass blocked by an object of someone else's looks again:
// the user may delete or rename it at any time, and a cache that holds only the operator's
// objects does not see that.
const NotOwnedRecheck = time.Minute

// ResultOf is a pass's result: an object of someone else's waits for the user (no retry
// storm), looking again now and then; a namespace being deleted, which refuses new objects,
// ends the pass without a retry (its deletion takes the owner too); other errors are retried
// with back-off.
func ResultOf(err error) (ctrl.Result, error) {
	if _, notOwned := IsNotOwned(err); notOwned {
		return ctrl.Result{RequeueAfter: NotOwnedRecheck}, nil
	}
	if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, err
}
