package kreruntime

import (
	"fmt"
	"slices"
	"strings"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
)

// An Ingress host is the cluster's, not a namespace's: whichever Ingress names it first (or
// last, depending on the controller) receives its traffic, so a Runtime's author could take
// another namespace's entrypoint, and an ingress class may publish it where the platform did
// not mean it to be. EntrypointPolicy is what the operator's administrator lets Runtimes'
// entrypoints take (the manager's flags); anything else is refused before an Ingress is
// written.

// NamespacePlaceholder in a host pattern stands for the Runtime's own namespace.
const NamespacePlaceholder = "{namespace}"

// EntrypointPolicy is the Ingress hosts and classes Runtimes' entrypoints may take.
type EntrypointPolicy struct {
	// Hosts are host patterns: a host name, or *.<domain> for any name under domain; each
	// may hold {namespace}. Empty: any host.
	Hosts []string
	// IngressClasses are the ingress classes an entrypoint may name. Empty: any class. An
	// entrypoint naming none gets the cluster's default class, which is always allowed.
	IngressClasses []string
}

// Refusal says why the policy refuses rt's entrypoint, or is "" when it allows it.
func (p EntrypointPolicy) Refusal(rt *v1alpha1.Runtime) string {
	var refused []string
	host := entrypointHost(rt)
	if len(p.Hosts) > 0 && !slices.ContainsFunc(p.Hosts, func(pattern string) bool { return hostMatches(pattern, rt.Namespace, host) }) {
		refused = append(refused, fmt.Sprintf("entrypoint.host %q matches none of the hosts the operator allows in namespace %s (%s)",
			host, rt.Namespace, strings.ReplaceAll(strings.Join(p.Hosts, ", "), NamespacePlaceholder, rt.Namespace)))
	}
	if class := rt.Spec.Entrypoint.IngressClassName; class != nil && len(p.IngressClasses) > 0 && !slices.Contains(p.IngressClasses, *class) {
		refused = append(refused, fmt.Sprintf("entrypoint.ingressClassName %q is not one the operator allows (%s)",
			*class, strings.Join(p.IngressClasses, ", ")))
	}
	if len(refused) == 0 {
		return ""
	}
	return strings.Join(refused, "; ") + ": no Ingress is written; ask the operator's administrator (--entrypoint-hosts, --ingress-classes)"
}

// hostMatches says whether host matches pattern, {namespace} standing for namespace.
func hostMatches(pattern, namespace, host string) bool {
	pattern = strings.ReplaceAll(pattern, NamespacePlaceholder, namespace)
	if domain, ok := strings.CutPrefix(pattern, "*."); ok {
		return strings.HasSuffix(host, "."+domain)
	}
	return host == pattern
}
