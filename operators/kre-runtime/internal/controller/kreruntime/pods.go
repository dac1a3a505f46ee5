package kreruntime

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/shared/pods"
)

// Pods lists the pods with these labels in namespace. The manager's cache holds pods as
// metadata only (their watch wakes their owner), so r is the API reader: a pass reads pods
// only while a workload of theirs has not settled (PodsToRead).
func Pods(ctx context.Context, r client.Reader, namespace string, labels map[string]string) ([]corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := r.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels(labels)); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// Workload is what a StatefulSet's or a Deployment's status says of its pods.
type Workload struct {
	// Generation is the workload's; the rest is its status.
	Generation, ObservedGeneration                 int64
	Want, Replicas, ReadyReplicas, UpdatedReplicas int32
}

// PodsToRead reports whether a pass reads the pods of these workloads: whether one has pods
// and has not settled, with each of the replicas it wants ready on its current spec and no
// other. A settled workload's pods have nothing to tell (pods.Failure, a readiness ask): a
// pod that crashes, cannot pull its image or stays unready leaves its replica unready. So at
// a thousand Runtimes the manager keeps no pod bodies, and reads none once all are settled.
func PodsToRead(workloads ...Workload) bool {
	for _, w := range workloads {
		settled := w.ObservedGeneration >= w.Generation && w.Replicas == w.Want && w.ReadyReplicas == w.Want && w.UpdatedReplicas == w.Want
		if w.Replicas > 0 && !settled {
			return true
		}
	}
	return false
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
