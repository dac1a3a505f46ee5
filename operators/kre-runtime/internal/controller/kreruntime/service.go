package kreruntime

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
)

// services are c's headless Service (stable pod names, NATS routes; ready or not) and its
// client Service (`kre-<component>`, ready pods only).
func services(rt *v1alpha1.Runtime, c component) []*corev1.Service {
	l := objectLabels(rt, c.name)
	ports := make([]corev1.ServicePort, len(c.ports))
	for i, p := range c.ports {
		ports[i] = corev1.ServicePort{Name: p.Name, Port: p.ContainerPort, TargetPort: intstr.FromString(p.Name), Protocol: corev1.ProtocolTCP}
	}
	headless := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: headlessName(c.name), Namespace: rt.Namespace, Labels: l},
		Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: l, Ports: ports, PublishNotReadyAddresses: true},
	}
	client := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: ObjectName(c.name), Namespace: rt.Namespace, Labels: l},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: l, Ports: ports[:1]},
	}
	return []*corev1.Service{headless, client}
}
