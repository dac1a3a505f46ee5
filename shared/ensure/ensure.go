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

// IsNamespaceTerminating reports whether err is (or wraps) the API server's refusal of a new
// object in a namespace being deleted, or already gone: a manager behind its watches (a
// thousand namespaces deleted at once) still has the owner in its cache after its namespace
// went, and the API server answers a create there that the namespace is not found.
func IsNamespaceTerminating(err error) bool {
	if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		return true
	}
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return false
	}
	details := status.Status().Details
	return details != nil && details.Group == "" && details.Kind == "namespaces"
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
	want, err := w.intentFor(owner, desired)
	if err != nil {
		return err
	}
	existing, err := w.createOrFind(ctx, owner, want)
	if err != nil || existing == nil {
		return err
	}
	if !metav1.IsControlledBy(existing, owner) {
		ownerKind, err := w.Client.GroupVersionKindFor(owner)
		if err != nil {
			return err
		}
		return &NotOwnedError{Kind: want.gvk.Kind, Name: desired.GetName(), Controller: controlledBy(existing, ownerKind.Kind), Labels: existing.GetLabels()}
	}
	switch {
	case want.specHash != "" && asApplied(existing, want.specHash), want.checked && w.Checked.asChecked(existing, want.sum):
		return nil
	case want.specHash != "" || want.checked:
		// The cache holds the object without its spec (SpecsOutOfCache) or as metadata
		// (Checked): compare it whole.
		existing = desired.DeepCopyObject().(client.Object)
		if err := w.apiReader().Get(ctx, want.key, existing); err != nil {
			return fmt.Errorf("reading %s %s: %w", want.gvk.Kind, desired.GetName(), err)
		}
	}
	return w.bringUpToDate(ctx, owner, want, existing)
}

// intent is what Ensure wants of an object, and how it tells the object holds it.
type intent struct {
	desired  client.Object
	gvk      schema.GroupVersionKind
	key      client.ObjectKey
	specHash string    // AppliedSpecAnnotation's hash, for a kind with a large spec
	checked  bool      // a kind the cache holds as metadata (Writer.Checked)
	sum      wantedSum // the hash of desired whole, when checked
}

// intentFor makes desired controller-owned by owner, with its AppliedSpecAnnotation when its
// kind has one.
func (w Writer) intentFor(owner, desired client.Object) (*intent, error) {
	gvk, err := w.Client.GroupVersionKindFor(desired)
	if err != nil {
		return nil, err
	}
	if err := controllerutil.SetControllerReference(owner, desired, w.Client.Scheme()); err != nil {
		return nil, err
	}
	want := &intent{desired: desired, gvk: gvk, key: client.ObjectKeyFromObject(desired), checked: w.Checked.covers(desired)}
	if want.specHash, err = specHash(desired); err != nil {
		return nil, err
	}
	if want.specHash != "" {
		setApplied(desired, want.specHash, 1) // the API server creates an object at generation 1
	}
	if want.checked {
		if want.sum, err = wantedHash(desired); err != nil {
			return nil, err
		}
	}
	return want, nil
}

// createOrFind creates the object when the cache does not have it, and returns nil then;
// otherwise it returns the object as the cache holds it, or as the API server does when the
// create finds it exists (made by an earlier pass the cache has not seen yet, or someone
// else's: the cache holds only labelled objects).
func (w Writer) createOrFind(ctx context.Context, owner client.Object, want *intent) (client.Object, error) {
	existing := want.desired.DeepCopyObject().(client.Object)
	if want.checked {
		existing = metadataOf(want.gvk)
	}
	err := w.Client.Get(ctx, want.key, existing)
	if apierrors.IsNotFound(err) {
		if err = w.Client.Create(ctx, want.desired); !apierrors.IsAlreadyExists(err) {
			// Logged once the API server answered: a create that finds the object made by an
			// earlier pass wrote nothing.
			ctrl.LoggerFrom(ctx).Info("Creating "+want.gvk.Kind, want.gvk.Kind, klog.KObj(want.desired))
			if err == nil && want.checked {
				w.Checked.record(want.desired, want.sum)
			}
			return nil, w.recorded(ctx, owner, want.desired, EventCreated, want.gvk.Kind, WriteError("creating", want.gvk.Kind, want.desired, err))
		}
		err = w.apiReader().Get(ctx, want.key, existing)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", want.gvk.Kind, want.key.Name, err)
	}
	return existing, nil
}

// bringUpToDate copies what the operator manages from the desired object into existing, read
// whole, and updates it when that changed anything; with nothing changed, it records that
// existing holds what the operator wants (AppliedSpecAnnotation, or Writer.Checked).
func (w Writer) bringUpToDate(ctx context.Context, owner client.Object, want *intent, existing client.Object) error {
	changed, err := CopyManagedFields(want.desired, existing)
	switch {
	case err != nil:
		return err
	case !changed && want.specHash != "":
		return WriteError("annotating", want.gvk.Kind, existing, w.recordApplied(ctx, existing, want.specHash))
	case !changed:
		if want.checked {
			w.Checked.record(existing, want.sum)
		}
		return nil
	}
	generation := existing.GetGeneration() + 1 // a change of its spec moves it by one
	if want.specHash != "" {
		setApplied(existing, want.specHash, generation)
	}
	ctrl.LoggerFrom(ctx).Info("Updating "+want.gvk.Kind, want.gvk.Kind, klog.KObj(existing))
	err = w.recorded(ctx, owner, existing, EventUpdated, want.gvk.Kind, WriteError("updating", want.gvk.Kind, existing, w.Client.Update(ctx, existing)))
	if err == nil && want.checked {
		w.Checked.record(existing, want.sum)
	}
	if err != nil || want.specHash == "" {
		return err
	}
	return WriteError("annotating", want.gvk.Kind, existing, w.checkApplied(ctx, existing, generation))
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
	if IsNamespaceTerminating(err) {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, err
}
