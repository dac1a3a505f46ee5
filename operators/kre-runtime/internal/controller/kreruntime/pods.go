package kreruntime

import (
	"context"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/shared/ensure"
	"github.com/quintet-operators/quintet/shared/pods"
)

// UnsettledRecheck is how soon a pass looks again at a Runtime or version with a workload that
// has pods and has not settled (PodsToRead). The manager does not watch pods: their
// workloads' status wakes a pass when a pod is made, turns ready or goes, and this recheck
// when a pod fails in a way its workload's status does not show (a crash loop, an image that
// cannot be pulled, a pod that stays unready).
const UnsettledRecheck = 15 * time.Second

// recheckAfter is how soon a pass looks again at a Runtime or version: UnsettledRecheck while a
// workload of theirs has not settled (PodsToRead), sooner when a pod's readiness grace ends
// first (graceEnds, 0 for none); never once all have settled, when only a watch wakes it.
func recheckAfter(unsettled bool, graceEnds time.Duration) time.Duration {
	switch {
	case !unsettled:
		return 0
	case graceEnds > 0:
		return min(graceEnds, UnsettledRecheck)
	}
	return UnsettledRecheck
}

// ResultOf is a pass's result as ensure.ResultOf gives it, and, when that neither retries nor
// looks again, recheckAfter(unsettled, graceEnds).
func ResultOf(err error, unsettled bool, graceEnds time.Duration) (ctrl.Result, error) {
	result, err := ensure.ResultOf(err)
	if result.IsZero() && err == nil {
		result.RequeueAfter = recheckAfter(unsettled, graceEnds)
	}
	return result, err
}

// Pods lists the pods with these labels in namespace. The manager does not cache pods, so r is
// the API reader: a pass reads pods only while a workload of theirs has not settled
// (PodsToRead).
func Pods(ctx context.Context, r client.Reader, namespace string, labels map[string]string) ([]corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := r.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels(labels)); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// workload is what a StatefulSet's or a Deployment's status says of its pods.
type workload struct {
	// generation is the workload's; the rest is its status.
	generation, observedGeneration                 int64
	want, replicas, readyReplicas, updatedReplicas int32
}

func workloadOf[W *appsv1.StatefulSet | *appsv1.Deployment](obj W) workload {
	switch o := any(obj).(type) {
	case *appsv1.StatefulSet:
		return workload{o.Generation, o.Status.ObservedGeneration, ptr.Deref(o.Spec.Replicas, 1), o.Status.Replicas, o.Status.ReadyReplicas, o.Status.UpdatedReplicas}
	case *appsv1.Deployment:
		return workload{o.Generation, o.Status.ObservedGeneration, ptr.Deref(o.Spec.Replicas, 1), o.Status.Replicas, o.Status.ReadyReplicas, o.Status.UpdatedReplicas}
	}
	return workload{}
}

// PodsToRead reports whether a pass reads the pods of these StatefulSets or Deployments:
// whether one has pods and has not settled, with each of the replicas it wants ready on its
// current spec and no other. A settled workload's pods have nothing to tell (pods.Failure, a
// readiness ask): a pod that crashes, cannot pull its image or stays unready leaves its
// replica unready. So the manager keeps no pods, and reads none once all are settled.
func PodsToRead[W *appsv1.StatefulSet | *appsv1.Deployment](workloads map[string]W) bool {
	for _, w := range workloads {
		if unsettled(workloadOf(w)) {
			return true
		}
	}
	return false
}

// unsettled reports whether w has pods and has not settled.
func unsettled(w workload) bool {
	settled := w.observedGeneration >= w.generation && w.replicas == w.want && w.readyReplicas == w.want && w.updatedReplicas == w.want
	return w.replicas > 0 && !settled
}

// PodFailures says, sorted, why pods cannot run (pods.Failure): a crash loop, an image that
// cannot be pulled, a Secret or key that is missing.
func PodFailures(list []corev1.Pod) []string {
	var out []string
	for i := range list {
		if failure := pods.Failure(&list[i]); failure != "" {
			out = append(out, failure)
		}
	}
	slices.Sort(out)
	return out
}
