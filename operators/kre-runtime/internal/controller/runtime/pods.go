package runtime

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/quintet-operators/quintet/shared/podfailure"
)

// PodFailures says, sorted, why pods with these labels cannot run (podfailure.Of): a crash
// loop, an image that cannot be pulled, a Secret or key that is missing.
func PodFailures(ctx context.Context, r client.Reader, namespace string, labels map[string]string) ([]string, error) {
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels(labels)); err != nil {
		return nil, err
	}
	var out []string
	for i := range pods.Items {
		if failure := podfailure.Of(&pods.Items[i]); failure != "" {
			out = append(out, failure)
		}
	}
	slices.Sort(out)
	return out, nil
}

// OwnerOfPod maps a pod to the object named by its label, in its namespace: the Runtime or
// RuntimeVersion whose status reports it.
func OwnerOfPod(label string) handler.MapFunc {
	return func(_ context.Context, pod client.Object) []reconcile.Request {
		name := pod.GetLabels()[label]
		if name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: pod.GetNamespace(), Name: name}}}
	}
}
