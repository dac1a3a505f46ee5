package ensure

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// AppliedSpecAnnotation is written on each object with a large spec the operator writes
// (StatefulSets, Deployments, DaemonSets, objects of other operators' APIs): "<hash of the
// spec the operator wanted>@<the object's generation once the API server held it>". Any
// change of an object's spec, by hand or by anyone, moves its generation; so while the hash
// of what the operator wants and the generation the cache sees still match it, the object is
// as the operator left it, and the manager's cache need not hold its spec (SpecsOutOfCache).
const AppliedSpecAnnotation = "quintet-operators.github.io/applied-spec"

// SpecsOutOfCache is a cache option for shared/manager: the manager's cache keeps
// StatefulSets, Deployments and DaemonSets without their pod templates (and a StatefulSet
// without its volume claim templates), and objects of other operators' APIs (unstructured)
// without their spec. Ensure reads such an object whole from the API server, past the cache,
// only when its AppliedSpecAnnotation no longer matches. Nothing else of the operator may
// read those fields from the cache. It runs before the transform already set (the one that
// drops managedFields).
func SpecsOutOfCache(o *ctrl.Options) {
	next := o.Cache.DefaultTransform
	o.Cache.DefaultTransform = func(obj any) (any, error) {
		switch w := obj.(type) {
		case *appsv1.StatefulSet:
			w.Spec.Template, w.Spec.VolumeClaimTemplates = corev1.PodTemplateSpec{}, nil
		case *appsv1.Deployment:
			w.Spec.Template = corev1.PodTemplateSpec{}
		case *appsv1.DaemonSet:
			w.Spec.Template = corev1.PodTemplateSpec{}
		case *unstructured.Unstructured:
			delete(w.Object, "spec")
		}
		if next == nil {
			return obj, nil
		}
		return next(obj)
	}
}

// specOf is the spec of obj that AppliedSpecAnnotation covers, and whether obj's kind has one.
func specOf(obj client.Object) (any, bool) {
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		return o.Spec, true
	case *appsv1.Deployment:
		return o.Spec, true
	case *appsv1.DaemonSet:
		return o.Spec, true
	case *unstructured.Unstructured:
		return o.Object["spec"], true
	}
	return nil, false
}

// specHash is the hash of desired's spec for AppliedSpecAnnotation ("" for a kind without one).
func specHash(desired client.Object) (string, error) {
	spec, ok := specOf(desired)
	if !ok {
		return "", nil
	}
	data, err := json.Marshal(spec)
	if err != nil {
		return "", fmt.Errorf("hashing the spec of %s: %w", desired.GetName(), err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:12]), nil
}

// applied is the value of AppliedSpecAnnotation.
func applied(hash string, generation int64) string {
	return hash + "@" + strconv.FormatInt(generation, 10)
}

// asApplied reports whether obj still holds the spec of hash, as the operator left it.
func asApplied(obj client.Object, hash string) bool {
	return obj.GetAnnotations()[AppliedSpecAnnotation] == applied(hash, obj.GetGeneration())
}

// setApplied sets AppliedSpecAnnotation on obj.
func setApplied(obj client.Object, hash string, generation int64) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AppliedSpecAnnotation] = applied(hash, generation)
	obj.SetAnnotations(annotations)
}

// recordApplied writes AppliedSpecAnnotation on existing, read whole and found to hold the spec
// of hash, unless it says so already. The write fails if the object changed since it was read.
func (w Writer) recordApplied(ctx context.Context, existing client.Object, hash string) error {
	if asApplied(existing, hash) {
		return nil
	}
	before := existing.DeepCopyObject().(client.Object)
	generation := existing.GetGeneration()
	if _, ok := existing.(*appsv1.Deployment); ok {
		generation++ // a Deployment's annotations are its ReplicaSets': a change moves its generation
	}
	setApplied(existing, hash, generation)
	if err := w.Client.Patch(ctx, existing, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	return w.checkApplied(ctx, existing, generation)
}

// checkApplied removes AppliedSpecAnnotation from obj, just written with the annotation naming
// generation, if the API server gave it another: the next pass then reads obj whole and
// compares. (An update that changes no field of the spec, after the server's defaults,
// leaves the generation where it was.)
func (w Writer) checkApplied(ctx context.Context, obj client.Object, generation int64) error {
	if obj.GetGeneration() == generation {
		return nil
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, AppliedSpecAnnotation)
	return w.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch)))
}
