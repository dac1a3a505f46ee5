package gordon

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1 "github.com/quintet-operators/quintet/operators/gordon/api/v1"
)

// keyOf is the expectations key of a Gordon: namespace/name, as its reconcile request.
func keyOf(g *v1.Gordon) string {
	return types.NamespacedName{Namespace: g.Namespace, Name: g.Name}.String()
}

// removeTerminatedPods deletes pods that succeeded or failed (evicted, crashed with
// restartPolicy overridden, ...), so that scale replaces them and status lists live pods only.
func (r *Reconciler) removeTerminatedPods(ctx context.Context, g *v1.Gordon, terminated []corev1.Pod) error {
	var errs []error
	for i := range terminated {
		p := &terminated[i]
		if err := r.Delete(ctx, p, client.Preconditions{UID: &p.UID}); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting terminated pod %s: %w", p.Name, err))
			continue
		}
		r.Recorder.Eventf(g, p, corev1.EventTypeNormal, v1.EventPodReplaced, "Delete",
			"Removed pod %s in phase %s (%s) to replace it", p.Name, p.Status.Phase, p.Status.Reason)
	}
	if err := errors.Join(errs...); err != nil {
		r.Recorder.Eventf(g, nil, corev1.EventTypeWarning, v1.ReasonPodDeleteFailed, "Delete", "%v", err)
		return err
	}
	return nil
}

// scale creates or deletes pods so that g has the desired number of active pods.
func (r *Reconciler) scale(ctx context.Context, g *v1.Gordon, active []corev1.Pod, res *syncResult) {
	diff := len(active) - int(g.DesiredReplicas())
	switch {
	case diff < 0:
		res.createErr = r.createPods(ctx, g, -diff)
	case diff > 0:
		res.deleteErr = errors.Join(res.deleteErr, r.deletePods(ctx, g, podsToDelete(active, diff)))
	}
}

// createPods creates n pods in batches of 1, 2, 4, ... (as the ReplicaSet controller does),
// stopping after a batch with a failure, so a quota or admission error costs one request
// rather than n.
func (r *Reconciler) createPods(ctx context.Context, g *v1.Gordon, n int) error {
	key := keyOf(g)
	r.expectations.expectCreations(key, n)
	created, err := slowStart(n, func() error {
		pod := newPod(g, r.ProxyEnv)
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
	if err != nil {
		r.Recorder.Eventf(g, nil, corev1.EventTypeWarning, v1.ReasonPodCreateFailed, "Create", "Creating pods: %v", err)
		return fmt.Errorf("creating pods: %w", err)
	}
	return nil
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

// deletePods deletes the given pods of g.
func (r *Reconciler) deletePods(ctx context.Context, g *v1.Gordon, pods []corev1.Pod) error {
	key := keyOf(g)
	names := make([]string, len(pods))
	for i := range pods {
		names[i] = client.ObjectKeyFromObject(&pods[i]).String()
	}
	r.expectations.expectDeletions(key, names)
	var errs []error
	deleted := 0
	for i := range pods {
		p := &pods[i]
		err := r.Delete(ctx, p, client.Preconditions{UID: &p.UID})
		switch {
		case err == nil:
			deleted++
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
	if err := errors.Join(errs...); err != nil {
		r.Recorder.Eventf(g, nil, corev1.EventTypeWarning, v1.ReasonPodDeleteFailed, "Delete", "%v", err)
		return err
	}
	return nil
}
