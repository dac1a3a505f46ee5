package etcdcluster

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/jobs"
)

// ManagerPodLabels are on the manager's pods (config/manager, and so the bundle's and the
// chart's Deployment): with the manager's namespace they let it through members' policies.
var ManagerPodLabels = map[string]string{"app.kubernetes.io/name": "etcd-cluster-operator", "control-plane": "controller-manager"}

func networkPolicyName(c *v1beta2.EtcdCluster) string { return c.Name + "-members" }

// managerPeer is the manager's pods in its namespace; nil when the manager does not know its
// namespace (it runs outside the cluster, make run, and reaches members from a node).
func managerPeer(namespace string) *networkingv1.NetworkPolicyPeer {
	if namespace == "" {
		return nil
	}
	return &networkingv1.NetworkPolicyPeer{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: namespace}},
		PodSelector:       &metav1.LabelSelector{MatchLabels: ManagerPodLabels},
	}
}

// networkPolicy lets into the members (ingress only; what members reach is not limited):
// on the peer port, the cluster's own members; on the client port, the members (etcdctl in
// one, against another), the manager (manager, nil when outside the cluster), the
// operator's backup Jobs of the namespace (an EtcdBackup names a cluster of its own
// namespace) and what spec.clientAccess allows; with TLS, on the metrics port (/metrics and
// /health only, no keys or values), anyone: Prometheus wherever it runs. Every number and
// default set, so that an unchanged policy compares equal to the server's.
func networkPolicy(c *v1beta2.EtcdCluster, manager *networkingv1.NetworkPolicyPeer) *networkingv1.NetworkPolicy {
	members := networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: selectorLabels(c)}}
	port := func(p int32) []networkingv1.NetworkPolicyPort {
		tcp, n := corev1.ProtocolTCP, intstr.FromInt32(p)
		return []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &n}}
	}
	clients := networkingv1.NetworkPolicyIngressRule{Ports: port(clientPort)}
	access := c.Spec.ClientAccess
	if access == nil {
		access = &v1beta2.ClientAccess{}
	}
	if access.Allow != v1beta2.ClientAccessAll { // a rule without peers lets everyone in
		clients.From = append(clients.From, members)
		if manager != nil {
			clients.From = append(clients.From, *manager)
		}
		clients.From = append(clients.From, networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{
			MatchLabels:      map[string]string{jobs.ManagedByLabel: jobs.ManagedBy},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: v1beta2.BackupLabel, Operator: metav1.LabelSelectorOpExists}},
		}})
		if access.Allow == v1beta2.ClientAccessSelected {
			clients.From = append(clients.From, access.From...)
		} else {
			clients.From = append(clients.From, networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{}})
		}
	}
	ingress := []networkingv1.NetworkPolicyIngressRule{
		{Ports: port(peerPort), From: []networkingv1.NetworkPolicyPeer{members}},
		clients,
	}
	if c.Spec.TLS != nil {
		ingress = append(ingress, networkingv1.NetworkPolicyIngressRule{Ports: port(metricsPort)})
	}
	return &networkingv1.NetworkPolicy{
		ObjectMeta: objectMeta(c, networkPolicyName(c)),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: selectorLabels(c)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     ingress,
		},
	}
}

// reconcileNetworkPolicy keeps the members' NetworkPolicy current, or, with spec.networkPolicy
// None, deletes the one the operator made.
func (r *Reconciler) reconcileNetworkPolicy(ctx context.Context, c *v1beta2.EtcdCluster) error {
	if c.Spec.NetworkPolicy != v1beta2.NetworkPolicyNone {
		return r.ensure(ctx, c, networkPolicy(c, managerPeer(r.ManagerNamespace)))
	}
	existing := &networkingv1.NetworkPolicy{}
	err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: networkPolicyName(c)}, existing)
	if err != nil || !metav1.IsControlledBy(existing, c) {
		return client.IgnoreNotFound(err)
	}
	ctrl.LoggerFrom(ctx).Info("Deleting NetworkPolicy", "networkPolicy", klog.KObj(existing), "reason", "spec.networkPolicy is None")
	return client.IgnoreNotFound(r.Delete(ctx, existing))
}
