package gordon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/quintet-operators/quintet/operators/gordon/api/v1"
	"github.com/quintet-operators/quintet/shared/ensure"
)

// keyOf is the expectations key of a Gordon: namespace/name, as its reconcile request.
func keyOf(g *v1.Gordon) string {
	return types.NamespacedName{Namespace: g.Namespace, Name: g.Name}.String()
}

// removeTerminatedPods deletes pods that succeeded or failed (evicted, rejected by the
// kubelet, ...), so that the plan replaces them and status lists live pods only. Replacements
// back off per Gordon: while they do, the terminated pods stay (for `kubectl describe`) and
// the returned delay says when to look again. A failure to delete shows in the Degraded
// condition (and its Event, once), not in an Event per pass.
func (r *Reconciler) removeTerminatedPods(ctx context.Context, g *v1.Gordon, terminated []corev1.Pod) (time.Duration, error) {
	if len(terminated) == 0 {
		return 0, nil
	}
	key := keyOf(g)
	if wait := r.backoff.wait(key); wait > 0 {
		return wait, nil
	}
	log := ctrl.LoggerFrom(ctx)
	var errs []error
	for i := range terminated {
		p := &terminated[i]
		log.Info("Deleting terminated pod", "pod", p.Name, "phase", p.Status.Phase, "reason", p.Status.Reason)
		err := r.Delete(ctx, p, client.Preconditions{UID: &p.UID})
		switch {
		case err == nil:
			countReplaced(g, terminatedReason(p))
		case !apierrors.IsNotFound(err): // a pod someone else deleted first is not counted
			errs = append(errs, fmt.Errorf("deleting terminated pod %s: %w", p.Name, err))
			continue
		}
		r.Recorder.Eventf(g, p, corev1.EventTypeNormal, v1.EventPodReplaced, "Delete",
			"Removed pod %s in phase %s (%s) to replace it", p.Name, p.Status.Phase, p.Status.Reason)
	}
	r.backoff.replaced(key)
	return 0, errors.Join(errs...)
}

// applyPlan makes the plan's pods from template and deletes the plan's pods, having told the
// expectations what the cache is to show before the next plan.
func (r *Reconciler) applyPlan(ctx context.Context, g *v1.Gordon, template *corev1.Pod, plan podPlan, res *syncResult) {
	if plan.create == 0 && len(plan.delete) == 0 {
		return
	}
	names := make([]string, len(plan.delete))
	for i := range plan.delete {
		names[i] = client.ObjectKeyFromObject(&plan.delete[i]).String()
	}
	r.expectations.expect(keyOf(g), plan.create, names)
	if plan.create > 0 {
		res.createErr = r.createPods(ctx, g, template, plan.create)
	}
	if len(plan.delete) > 0 {
		res.deleteErr = errors.Join(res.deleteErr, r.deletePods(ctx, g, plan.delete, names, template.Labels[v1.TemplateHashLabel]))
	}
}

// createPods creates n pods from template in batches of 1, 2, 4, ... (as the ReplicaSet
// controller does), stopping after a batch with a failure, so a quota or admission error
// costs one request rather than n.
func (r *Reconciler) createPods(ctx context.Context, g *v1.Gordon, template *corev1.Pod, n int) error {
	key := keyOf(g)
	ctrl.LoggerFrom(ctx).Info("Creating pods", "count", n, "template", template.Labels[v1.TemplateHashLabel])
	created, err := slowStart(n, func() error {
		pod := template.DeepCopy()
		if err := controllerutil.SetControllerReference(g, pod, r.Scheme()); err != nil {
			return err
		}
		return r.Create(ctx, pod)
	})
	// Pods that were never created will never be observed.
	for range n - created {
		r.expectations.creationObserved(key)
	}
	if created > 0 {
		r.Recorder.Eventf(g, nil, corev1.EventTypeNormal, v1.EventScaled, "Create", "Created %d pods", created)
	}
	if err == nil || ensure.IsNamespaceTerminating(err) {
		// A namespace being deleted refuses every pod until its deletion takes the Gordon
		// too: not retried, as the ReplicaSet controller does not; a pod deleted meanwhile
		// starts one more pass, and one more try.
		return nil
	}
	failure := errors.New("creating pods: " + podErrorMessage(err))
	if apierrors.IsInvalid(err) {
		// A spec the CRD's validation let through (requests above limits, ...): retrying the
		// same spec cannot succeed, so the Gordon waits in Degraded for its spec to change.
		return reconcile.TerminalError(failure)
	}
	return failure
}

// podErrorMessage is the API server's message about a pod without the pod's generated name,
// so that the same failure reads the same on every pass and the status is not rewritten
// (and the Gordon not reconciled again) each time.
func podErrorMessage(err error) string {
	var apiStatus apierrors.APIStatus
	if !errors.As(err, &apiStatus) {
		return err.Error()
	}
	s := apiStatus.Status()
	if s.Details != nil && s.Details.Name != "" {
		return strings.ReplaceAll(s.Message, s.Details.Name, "<generated name>")
	}
	return s.Message
}

// slowStart calls fn count times, in parallel batches that double from 1, and stops after
// the first batch with an error. It returns how many calls succeeded.
func slowStart(count int, fn func() error) (int, error) {
	done := 0
	for batch := 1; done < count; batch *= 2 {
		size := min(batch, count-done)
		errs := make([]error, size)
		var wg sync.WaitGroup
		for i := range size {
			wg.Go(func() { errs[i] = fn() })
		}
		wg.Wait()
		failed := 0
		for _, err := range errs {
			if err != nil {
				failed++
			}
		}
		done += size - failed
		if failed > 0 {
			return done, errors.Join(errs...)
		}
	}
	return done, nil
}

// deletePods deletes the given pods of g, whose namespace/names are names; hash is the
// current pod template's, which tells a rollout's deletions from a scale-down's.
func (r *Reconciler) deletePods(ctx context.Context, g *v1.Gordon, pods []corev1.Pod, names []string, hash string) error {
	key := keyOf(g)
	ctrl.LoggerFrom(ctx).Info("Deleting pods", "pods", names)
	var errs []error
	deleted := 0
	for i := range pods {
		p := &pods[i]
		err := r.Delete(ctx, p, client.Preconditions{UID: &p.UID})
		switch {
		case err == nil:
			deleted++
			countReplaced(g, planReason(p, hash))
		case apierrors.IsNotFound(err):
			r.expectations.deletionObserved(key, names[i])
		default:
			r.expectations.deletionObserved(key, names[i])
			errs = append(errs, fmt.Errorf("deleting pod %s: %w", p.Name, err))
		}
	}
	if deleted > 0 {
		r.Recorder.Eventf(g, nil, corev1.EventTypeNormal, v1.EventScaled, "Delete", "Deleted %d pods", deleted)
	}
	return errors.Join(errs...)
}
