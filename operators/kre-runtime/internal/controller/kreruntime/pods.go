package kreruntime

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/shared/pods"
)

// PodFailures says, sorted, why pods with these labels cannot run (pods.Failure): a crash
// loop, an image that cannot be pulled, a Secret or key that is missing.
func PodFailures(ctx context.Context, r client.Reader, namespace string, labels map[string]string) ([]string, error) {
	list := &corev1.PodList{}
	if err := r.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels(labels)); err != nil {
		return nil, err
	}
	var out []string
	for i := range list.Items {
		if failure := pods.Failure(&list.Items[i]); failure != "" {
			out = append(out, failure)
		}
	}
	slices.Sort(out)
	return out, nil
}
