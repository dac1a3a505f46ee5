//go:build e2e

package e2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const etcdSample = "example-etcd-cluster"

// expectEtcdObjects waits for the objects of a cluster and returns the pod of its first
// member, started by the operator as a new cluster.
func expectEtcdObjects(ctx context.Context, namespace string) *corev1.Pod {
	key := func(name string) client.ObjectKey { return client.ObjectKey{Namespace: namespace, Name: name} }
	first := &corev1.Pod{}
	Eventually(func(g Gomega) {
		sts := &appsv1.StatefulSet{}
		g.Expect(k8sClient.Get(ctx, key(etcdSample), sts)).To(Succeed())
		g.Expect(sts.Spec.Template.Spec.Containers[0].Image).To(Equal("gcr.io/etcd-development/etcd:v3.6.8"))
		g.Expect(k8sClient.Get(ctx, key(etcdSample), &corev1.Service{})).To(Succeed())
		g.Expect(k8sClient.Get(ctx, key(etcdSample+"-client"), &corev1.Service{})).To(Succeed())
		g.Expect(k8sClient.Get(ctx, key(etcdSample), &policyv1.PodDisruptionBudget{})).To(Succeed())
		g.Expect(k8sClient.Get(ctx, key(etcdSample+"-0"), first)).To(Succeed())
		g.Expect(first.Spec.SchedulingGates).To(BeEmpty(), "the operator lifted the first member's gate")
		g.Expect(first.Annotations).To(HaveKeyWithValue("etcd.database.coreos.com/initial-cluster-state", "new"))
		// The tutorial's `kubectl get po -l etcd_cluster=...` finds the member pods.
		pods := &corev1.PodList{}
		g.Expect(k8sClient.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels{"etcd_cluster": etcdSample})).To(Succeed())
		g.Expect(pods.Items).NotTo(BeEmpty())
	}).WithContext(ctx).Should(Succeed())
	return first
}

// expectMembersUnreachable: on kwok nodes no etcd runs, and the status says so.
func expectMembersUnreachable(ctx context.Context, namespace string) {
	c := &unstructured.Unstructured{}
	c.SetAPIVersion("etcd.database.coreos.com/v1beta2")
	c.SetKind("EtcdCluster")
	c.SetNamespace(namespace)
	c.SetName(etcdSample)
	Eventually(func(g Gomega) {
		g.Expect(conditionStatus(ctx, c, "Available")).To(Equal("False"))
		g.Expect(conditionStatus(ctx, c, "Ready")).To(Equal("False"))
		got := c.DeepCopy()
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(c), got)).To(Succeed())
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		var reasons []string
		for _, cond := range conds {
			m := cond.(map[string]any)
			if m["type"] == "Available" {
				reasons = append(reasons, m["reason"].(string))
			}
		}
		g.Expect(reasons).To(ConsistOf("MembersUnreachable"))
	}).WithContext(ctx).Should(Succeed())
}

// The field managers of the namespaced and the --cluster-wide manager.
const (
	namespacedManager  = "etcd-cluster"
	clusterWideManager = "etcd-cluster-clusterwide"
)

// expectWrittenOnlyBy checks who wrote the sample cluster in namespace: its StatefulSet,
// its status and the start of its first member name the given field manager, and never
// the other one, for a few seconds of passes.
func expectWrittenOnlyBy(ctx context.Context, namespace, manager, other string) {
	cluster := &unstructured.Unstructured{}
	cluster.SetAPIVersion("etcd.database.coreos.com/v1beta2")
	cluster.SetKind("EtcdCluster")
	writers := func(g Gomega, obj client.Object, name, subresource string) []string {
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj)).To(Succeed())
		var names []string
		for _, f := range obj.GetManagedFields() {
			if f.Subresource == subresource {
				names = append(names, f.Manager)
			}
		}
		return names
	}
	Eventually(func(g Gomega) {
		g.Expect(writers(g, &appsv1.StatefulSet{}, etcdSample, "")).To(ConsistOf(manager))
		pod := writers(g, &corev1.Pod{}, etcdSample+"-0", "")
		g.Expect(pod).To(ContainElement(manager))
		g.Expect(pod).NotTo(ContainElement(other))
		g.Expect(writers(g, cluster, etcdSample, "status")).To(ConsistOf(manager))
	}).WithContext(ctx).Should(Succeed())
	Consistently(func(g Gomega) {
		g.Expect(writers(g, cluster, etcdSample, "status")).NotTo(ContainElement(other))
	}).WithContext(ctx).WithTimeout(3 * time.Second).Should(Succeed())
}

var _ = Describe("The etcd-cluster operator on kwok nodes", Ordered, func() {
	var etc, etc2, wide string

	BeforeAll(func(ctx SpecContext) {
		etc = createNamespace(ctx, "etc", nil)
		etc2 = createNamespace(ctx, "etc2", nil)
		wide = createNamespace(ctx, "etc-clusterwide", nil)
		// Both managers see the clusters of etc and etc-clusterwide: only the scope rule
		// (the annotation) decides which of them acts on each.
		startOperator("etcd-cluster", []string{"WATCH_NAMESPACE=" + etc + "," + etc2 + "," + wide})
		startOperator("etcd-cluster", nil, "--cluster-wide")
	})

	It("reconciles the tutorial's sample to its objects and says honestly that no member answers", func(ctx SpecContext) {
		applySample(ctx, "etcd-cluster", "etcd_v1beta2_etcdcluster.yaml", etc)
		expectEtcdObjects(ctx, etc)
		expectMembersUnreachable(ctx, etc)
		By("leaving it to the namespaced manager, though the --cluster-wide one watches every namespace")
		expectWrittenOnlyBy(ctx, etc, namespacedManager, clusterWideManager)
	})

	It("keeps a second cluster of the same name in another namespace independent", func(ctx SpecContext) {
		applySample(ctx, "etcd-cluster", "etcd_v1beta2_etcdcluster.yaml", etc2)
		second := expectEtcdObjects(ctx, etc2)
		initialCluster := second.Annotations["etcd.database.coreos.com/initial-cluster"]
		Expect(initialCluster).To(ContainSubstring("." + etc2 + ".svc"))
		Expect(initialCluster).NotTo(ContainSubstring("." + etc + ".svc"))
		first, other := &appsv1.StatefulSet{}, &appsv1.StatefulSet{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: etc, Name: etcdSample}, first)).To(Succeed())
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: etc2, Name: etcdSample}, other)).To(Succeed())
		Expect(first.OwnerReferences[0].UID).NotTo(Equal(other.OwnerReferences[0].UID))
	})

	It("leaves the clusterwide-annotated sample to the --cluster-wide manager", func(ctx SpecContext) {
		c := applySample(ctx, "etcd-cluster", "etcd_v1beta2_etcdcluster_clusterwide.yaml", wide)
		Expect(c.GetAnnotations()).To(HaveKeyWithValue("etcd.database.coreos.com/scope", "clusterwide"))
		expectEtcdObjects(ctx, wide)
		expectMembersUnreachable(ctx, wide)
		sts := &appsv1.StatefulSet{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: wide, Name: etcdSample}, sts)).To(Succeed())
		Expect(metav1.IsControlledBy(sts, c)).To(BeTrue())
		By("the namespaced manager, which watches " + wide + " too, leaving it alone")
		expectWrittenOnlyBy(ctx, wide, clusterWideManager, namespacedManager)
	})
})
