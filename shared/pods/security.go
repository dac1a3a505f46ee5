package pods

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// RestrictedPodSecurityContext is the pod securityContext of the restricted Pod Security
// level: run as uid (user and group), never as root, with the runtime's default seccomp
// profile. A pod with volumes sets FSGroup too.
func RestrictedPodSecurityContext(uid int64) *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		RunAsUser:      ptr.To(uid),
		RunAsGroup:     ptr.To(uid),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// RestrictedContainerSecurityContext is sc (a copy; nil for none) with the unset fields the
// restricted Pod Security level needs: no privilege escalation, ALL capabilities dropped.
// What sc sets is kept: a CRD refuses the settings that break the level.
func RestrictedContainerSecurityContext(sc *corev1.SecurityContext) *corev1.SecurityContext {
	out := &corev1.SecurityContext{}
	if sc != nil {
		out = sc.DeepCopy()
	}
	if out.AllowPrivilegeEscalation == nil {
		out.AllowPrivilegeEscalation = ptr.To(false)
	}
	if out.Capabilities == nil {
		out.Capabilities = &corev1.Capabilities{}
	}
	if !slices.Contains(out.Capabilities.Drop, "ALL") {
		out.Capabilities.Drop = append(out.Capabilities.Drop, "ALL")
	}
	return out
}
