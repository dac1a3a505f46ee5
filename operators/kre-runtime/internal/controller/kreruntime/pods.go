package kreruntime

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/shared/pods"
)

// Pods lists the pods with these labels in namespace.
func Pods(ctx context.Context, r client.Reader, namespace string, labels map[string]string) ([]corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := r.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels(labels)); err != nil {
		return nil, err
	}
	return list.Items, nil
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
