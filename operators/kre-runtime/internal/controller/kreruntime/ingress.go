package kreruntime

import (
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
)

// IngressName is the name of a Runtime's Ingress.
const IngressName = "kre-entrypoint"

// EntrypointService is the Service of a RuntimeVersion's entrypoint, and its port.
func EntrypointService(version string) string { return version + "-entrypoint" }

// EntrypointPort is the port of a RuntimeVersion's entrypoint Service.
const EntrypointPort = 80

// DefaultEntrypointHost is an entrypoint's host when its spec names none (as the CRD defaults it).
const DefaultEntrypointHost = "runtime.local"

// entrypointHost is the host rt's Ingress routes.
func entrypointHost(rt *v1alpha1.Runtime) string {
	return orDefault(rt.Spec.Entrypoint.Host, DefaultEntrypointHost)
}

// ingress routes rt's entrypoint host to version's entrypoint Service.
func ingress(rt *v1alpha1.Runtime, version string) *networkingv1.Ingress {
	l := objectLabels(rt, "entrypoint")
	backend := networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
		Name: EntrypointService(version), Port: networkingv1.ServiceBackendPort{Number: EntrypointPort}}}
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: IngressName, Namespace: rt.Namespace, Labels: l},
		Spec: networkingv1.IngressSpec{
			IngressClassName: rt.Spec.Entrypoint.IngressClassName,
			Rules: []networkingv1.IngressRule{{
				Host: entrypointHost(rt),
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix), Backend: backend}},
				}},
			}},
		},
	}
}
