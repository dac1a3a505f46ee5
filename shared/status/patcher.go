// Package status writes an object's status once per reconcile, and only when it changed.
//
//	patcher := status.NewPatcher(obj)
//	defer func() { reterr = kerrors.NewAggregate([]error{reterr, patcher.Patch(ctx, c, obj)}) }()
package status

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// Patcher remembers an object as it was read, to patch its status at the end of a pass.
type Patcher struct {
	before client.Object
}

// NewPatcher snapshots obj.
func NewPatcher(obj client.Object) *Patcher {
	return &Patcher{before: obj.DeepCopyObject().(client.Object)}
}

// Patch sends a JSON merge patch of obj's status against the snapshot, with a log line as
// every write of a reconciler has. It makes no request (and logs nothing) when the status is
// unchanged, and ignores an object deleted in the meantime.
func (p *Patcher) Patch(ctx context.Context, c client.Client, obj client.Object) error {
	patch := client.MergeFrom(p.before)
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
