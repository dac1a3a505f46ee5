package gordon

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/quintet-operators/quintet/operators/gordon/api/v1"
)

// appName names the application in pod labels and the container of a gordon pod.
const appName = "gordon"

// nonRootUID runs the container as an unprivileged user whatever the image says.
const nonRootUID = 65532

// podLabels are the labels of every pod of g; GordonLabel alone selects them.
func podLabels(g *v1.Gordon) map[string]string {
	return map[string]string{
		v1.GordonLabel:                 g.Name,
		"app.kubernetes.io/name":       appName,
		"app.kubernetes.io/instance":   g.Name,
		"app.kubernetes.io/managed-by": "quintet-gordon",
	}
}

// selector is the label selector of g's pods, as the scale subresource reports it.
func selector(g *v1.Gordon) string { return v1.GordonLabel + "=" + g.Name }

// newPod builds a pod of g with the proxy variables proxyEnv. It meets the `restricted` Pod
// Security level. The caller sets the controller reference.
func newPod(g *v1.Gordon, proxyEnv []corev1.EnvVar) *corev1.Pod {
	spec := g.Spec.Gordon
	image := spec.Image
	if image == "" {
		image = v1.DefaultImage
	}
	container := corev1.Container{
		Name:            appName,
		Image:           image,
		ImagePullPolicy: spec.ImagePullPolicy,
		Env:             proxyEnv,
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
	if spec.Resources != nil {
		container.Resources = *spec.Resources
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: g.Name + "-",
			Namespace:    g.Namespace,
			Labels:       podLabels(g),
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyAlways,
			AutomountServiceAccountToken: ptr.To(false),
			NodeSelector:                 spec.NodeSelector,
			Tolerations:                  spec.Tolerations,
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To[int64](nonRootUID),
				RunAsGroup:     ptr.To[int64](nonRootUID),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{container},
		},
	}
}

// classifyPods splits g's pods into those that count (neither terminating nor terminated)
// and those that terminated (Succeeded or Failed, e.g. evicted) and must be replaced.
// Terminating pods (deletion requested) belong to neither.
func classifyPods(pods []corev1.Pod) (active, terminated []corev1.Pod) {
	for _, p := range pods {
		switch {
		case p.DeletionTimestamp != nil:
		case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
			terminated = append(terminated, p)
		default:
			active = append(active, p)
		}
	}
	return active, terminated
}

// isPodReady reports the pod's Ready condition.
func isPodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podsToDelete picks n pods to remove on scale-down: not-ready pods first (unscheduled, then
// pending, then the rest), and among equals the newest, so the longest-serving Ready pods stay.
func podsToDelete(active []corev1.Pod, n int) []corev1.Pod {
	if n <= 0 {
		return nil
	}
	sorted := slices.Clone(active)
	rank := func(p *corev1.Pod) int {
		switch {
		case p.Spec.NodeName == "":
			return 0
		case p.Status.Phase == corev1.PodPending:
			return 1
		case !isPodReady(p):
			return 2
		default:
			return 3
		}
	}
	slices.SortStableFunc(sorted, func(a, b corev1.Pod) int {
		if c := cmp.Compare(rank(&a), rank(&b)); c != 0 {
			return c
		}
		// Newest first.
		if c := b.CreationTimestamp.Compare(a.CreationTimestamp.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return sorted[:min(n, len(sorted))]
}
