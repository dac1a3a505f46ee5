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
		SecurityContext: restrictedSecurityContext(spec.SecurityContext),
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
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To[int64](nonRootUID),
				RunAsGroup:     ptr.To[int64](nonRootUID),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{container},
		},
	}
	pod.Labels[v1.TemplateHashLabel] = templateHash(&pod.Spec)
	return pod
}

// restrictedSecurityContext is the user's container securityContext with the unset fields
// the restricted Pod Security level needs: no privilege escalation, ALL capabilities dropped.
// The CRD refuses the settings that break that level.
func restrictedSecurityContext(user *corev1.SecurityContext) *corev1.SecurityContext {
	sc := &corev1.SecurityContext{}
	if user != nil {
		sc = user.DeepCopy()
	}
	if sc.AllowPrivilegeEscalation == nil {
		sc.AllowPrivilegeEscalation = ptr.To(false)
	}
	if sc.Capabilities == nil {
		sc.Capabilities = &corev1.Capabilities{}
	}
	if !slices.Contains(sc.Capabilities.Drop, "ALL") {
		sc.Capabilities.Drop = append(sc.Capabilities.Drop, "ALL")
	}
	return sc
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
