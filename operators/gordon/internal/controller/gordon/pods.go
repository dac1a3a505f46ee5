package gordon

import (
	"cmp"
	"encoding/json"
	"hash/fnv"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"

	v1 "github.com/quintet-operators/quintet/operators/gordon/api/v1"
	"github.com/quintet-operators/quintet/shared/pods"
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

// newPod builds a pod of g with the proxy variables proxyEnv, labelled with the hash of its
// spec. It meets the `restricted` Pod Security level. The caller sets the controller reference.
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
		Env:             append(slices.Clone(proxyEnv), spec.Env...),
		ReadinessProbe:  spec.ReadinessProbe,
		LivenessProbe:   spec.LivenessProbe,
		StartupProbe:    spec.StartupProbe,
		// The user's, with the unset fields the restricted level needs; the CRD refuses the
		// settings that break that level.
		SecurityContext: pods.RestrictedContainerSecurityContext(spec.SecurityContext),
	}
	if spec.Resources != nil {
		container.Resources = *spec.Resources
	}
	pod := &corev1.Pod{
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
			SecurityContext:              pods.RestrictedPodSecurityContext(nonRootUID),
			Containers:                   []corev1.Container{container},
		},
	}
	pod.Labels[v1.TemplateHashLabel] = templateHash(&pod.Spec)
	return pod
}

// templateHash names a pod spec: equal specs hash equal, so a pod whose label differs from
// the hash of the spec the Gordon asks for now runs an outdated template.
func templateHash(spec *corev1.PodSpec) string {
	data, err := json.Marshal(spec)
	if err != nil {
		panic(err) // a PodSpec always marshals
	}
	h := fnv.New32a()
	_, _ = h.Write(data)
	return rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
}

// classifyPods splits g's pods into those that count (neither terminating nor terminated)
// and those that terminated (Succeeded or Failed, e.g. evicted) and must be replaced.
// Terminating pods (deletion requested) belong to neither.
func classifyPods(all []corev1.Pod) (active, terminated []corev1.Pod) {
	for _, p := range all {
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
		case !pods.Ready(p):
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
