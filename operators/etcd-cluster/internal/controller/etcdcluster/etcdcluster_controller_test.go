package etcdcluster

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/shared/conditions"
)

const (
	timeout = 30 * time.Second
	tick    = 200 * time.Millisecond
)

func newNamespace(t *testing.T) string { return env.NewNamespace(t, "etcd-test") }

// applySample creates one of the tutorial's samples, unchanged, in namespace.
func applySample(t *testing.T, file, namespace string) *v1beta2.EtcdCluster {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "samples", file))
	if err != nil {
		t.Fatal(err)
	}
	c := &v1beta2.EtcdCluster{}
	if err := yaml.UnmarshalStrict(data, c); err != nil {
		t.Fatal(err)
	}
	c.Namespace = namespace
	if err := env.Client.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return c
}

func get(g Gomega, obj client.Object) {
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
}

func TestEtcdClusterCreatesItsObjectsAndSaysMembersAreUnreachable(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	c := applySample(t, "etcd_v1beta2_etcdcluster.yaml", ns)

	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: ns}}
	g.Eventually(func(g Gomega) { get(g, sts) }, timeout, tick).Should(Succeed())
	// Bootstrap is one member; the others join one at a time once it answers.
	g.Expect(*sts.Spec.Replicas).To(BeEquivalentTo(1))
	g.Expect(metav1.IsControlledBy(sts, c)).To(BeTrue())
	pod := sts.Spec.Template.Spec
	g.Expect(pod.Containers[0].Image).To(Equal("docker.io/prgcont/etcd:v3.2.13"))
	g.Expect(*pod.SecurityContext.RunAsNonRoot).To(BeTrue())
	g.Expect(*pod.Containers[0].SecurityContext.AllowPrivilegeEscalation).To(BeFalse())
	g.Expect(sts.Spec.Template.Labels).To(HaveKeyWithValue(v1beta2.ClusterLabel, c.Name))

	peer := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: ns}}
	get(g, peer)
	g.Expect(peer.Spec.ClusterIP).To(Equal(corev1.ClusterIPNone))
	g.Expect(peer.Spec.PublishNotReadyAddresses).To(BeTrue())
	get(g, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: c.Name + "-client", Namespace: ns}})
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: ns}}
	get(g, pdb)
	g.Expect(pdb.Spec.MaxUnavailable.IntValue()).To(Equal(1), "size 3 tolerates one voluntary disruption")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: c.Name + "-members", Namespace: ns}}
	get(g, cm)
	g.Expect(cm.Data).To(HaveKeyWithValue(envInitialClusterState, "new"))
	g.Expect(cm.Data[envInitialCluster]).To(HavePrefix(c.Name + "-0=http://" + c.Name + "-0." + c.Name + "." + ns + ".svc:2380"))

	// No etcd runs in envtest: the status says so rather than pretending.
	g.Eventually(func(g Gomega) {
		get(g, c)
		g.Expect(c.Status.ObservedGeneration).To(Equal(c.Generation))
		g.Expect(conditions.Get(c, v1beta2.AvailableCondition)).NotTo(BeNil())
		g.Expect(conditions.Get(c, v1beta2.AvailableCondition).Reason).To(Equal(v1beta2.ReasonMembersUnreachable))
		g.Expect(conditions.IsTrue(c, v1beta2.ReadyCondition)).To(BeFalse())
		g.Expect(c.Status.Phase).To(Equal(v1beta2.PhaseCreating))
		g.Expect(c.Status.ClientService).To(Equal(c.Name + "-client"))
	}, timeout, tick).Should(Succeed())
}

func TestEtcdClusterScopeFollowsTheCoreOSOperator(t *testing.T) {
	g := NewWithT(t)
	// The same name in two namespaces: one plain, one annotated clusterwide. Each is handled
	// by exactly one of the two operators, and their objects stay apart.
	plainNS, wideNS := newNamespace(t), newNamespace(t)
	plain := applySample(t, "etcd_v1beta2_etcdcluster.yaml", plainNS)
	wide := applySample(t, "etcd_v1beta2_etcdcluster_clusterwide.yaml", wideNS)
	for _, c := range []*v1beta2.EtcdCluster{plain, wide} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: c.Name + "-members", Namespace: c.Namespace}}
		g.Eventually(func(g Gomega) { get(g, cm) }, timeout, tick).Should(Succeed())
		g.Expect(cm.Data[envInitialCluster]).To(ContainSubstring("." + c.Namespace + ".svc"))
		g.Expect(metav1.IsControlledBy(cm, c)).To(BeTrue())
	}
	// Each cluster's operator writes its status; with both managers running a wrong scope
	// rule would make them fight, which shows as a status written for a cluster out of scope:
	// here, the namespaced manager must never touch the annotated cluster and vice versa.
	g.Eventually(func(g Gomega) {
		get(g, wide)
		g.Expect(wide.Status.ObservedGeneration).To(Equal(wide.Generation))
	}, timeout, tick).Should(Succeed())
	scope := &Reconciler{ClusterWide: false}
	g.Expect(scope.manages(plain)).To(BeTrue())
	g.Expect(scope.manages(wide)).To(BeFalse())
	scope.ClusterWide = true
	g.Expect(scope.manages(plain)).To(BeFalse())
	g.Expect(scope.manages(wide)).To(BeTrue())
}

func TestPausedEtcdClusterIsOnlyObserved(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "paused", Namespace: ns}}
	c.Spec.Paused = true
	g.Expect(env.Client.Create(context.Background(), c)).To(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, c)
		g.Expect(c.Status.Phase).To(Equal(v1beta2.PhasePaused))
		g.Expect(conditions.Get(c, v1beta2.ProgressingCondition).Reason).To(Equal(v1beta2.ReasonPaused))
	}, timeout, tick).Should(Succeed())
	g.Consistently(func() error {
		return env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "paused"}, &appsv1.StatefulSet{})
	}, 2*time.Second, tick).ShouldNot(Succeed(), "a paused cluster gets no StatefulSet")
}

func TestEtcdClusterRejectsBadInputAtAdmission(t *testing.T) {
	ns := newNamespace(t)
	tests := []struct {
		name string
		spec map[string]any
		want string
	}{
		{"size 0", map[string]any{"size": 0}, "spec.size in body should be greater than or equal to 1"},
		{"size 10", map[string]any{"size": 10}, "spec.size in body should be less than or equal to 9"},
		{"size of the wrong type", map[string]any{"size": "three"}, "spec.size in body must be of type integer"},
		{"version latest", map[string]any{"version": "latest"}, "version must be a semantic version such as 3.6.8, without a leading v"},
		{"version with a v", map[string]any{"version": "v3.6.8"}, "version must be a semantic version"},
		{"managed flag", map[string]any{"pod": map[string]any{"etcdArgs": []any{"--data-dir=/tmp"}}}, "etcdArgs must not set flags the operator manages"},
		{"not a flag", map[string]any{"pod": map[string]any{"etcdArgs": []any{"quota"}}}, "each etcdArgs entry must be a flag starting with --"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": v1beta2.GroupVersion.String(), "kind": "EtcdCluster",
				"metadata": map[string]any{"generateName": "bad-", "namespace": ns},
				"spec":     tt.spec,
			}}
			NewWithT(t).Expect(env.Client.Create(context.Background(), u)).To(MatchError(ContainSubstring(tt.want)))
		})
	}
}

func TestEtcdClusterDefaults(t *testing.T) {
	g := NewWithT(t)
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "defaults", Namespace: newNamespace(t)}}
	c.Spec.Paused = true // only the defaults matter here
	g.Expect(env.Client.Create(context.Background(), c)).To(Succeed())
	get(g, c)
	g.Expect(c.Spec.Size).To(BeEquivalentTo(3))
	g.Expect(c.Spec.Version).To(Equal(v1beta2.DefaultVersion))
	g.Expect(c.Spec.Repository).To(Equal(v1beta2.DefaultRepository))
}
