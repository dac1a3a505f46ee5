package etcdcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
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

// writers are the field managers that wrote obj (its spec, metadata or status).
func writers(g Gomega, obj client.Object) []string {
	get(g, obj)
	var names []string
	for _, f := range obj.GetManagedFields() {
		if !slices.Contains(names, f.Manager) {
			names = append(names, f.Manager)
		}
	}
	return names
}

func TestEtcdClusterScopeFollowsTheCoreOSOperator(t *testing.T) {
	g := NewWithT(t)
	// The same name in two namespaces: one plain, one annotated clusterwide, and both
	// managers running. Each cluster is written by exactly one of them: its objects and its
	// status name only that manager (managedFields), never the other.
	plainNS, wideNS := newNamespace(t), newNamespace(t)
	plain := applySample(t, "etcd_v1beta2_etcdcluster.yaml", plainNS)
	wide := applySample(t, "etcd_v1beta2_etcdcluster_clusterwide.yaml", wideNS)
	for _, tc := range []struct {
		cluster      *v1beta2.EtcdCluster
		owner, other string
	}{{plain, fieldOwners[false], fieldOwners[true]}, {wide, fieldOwners[true], fieldOwners[false]}} {
		c := tc.cluster
		g.Eventually(func(g Gomega) {
			get(g, c)
			g.Expect(c.Status.ObservedGeneration).To(Equal(c.Generation))
			g.Expect(c.Status.Phase).To(Equal(v1beta2.PhaseCreating))
		}, timeout, tick).Should(Succeed())
		for _, obj := range []client.Object{
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: c.Name + "-members", Namespace: c.Namespace}},
			&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: c.Namespace}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: c.Name + "-client", Namespace: c.Namespace}},
		} {
			g.Eventually(func(g Gomega) { g.Expect(writers(g, obj)).To(ConsistOf(tc.owner)) }, timeout, tick).Should(Succeed())
			g.Expect(metav1.IsControlledBy(obj, c)).To(BeTrue())
		}
		g.Expect(writers(g, c)).To(ContainElement(tc.owner), "its manager writes the status")
		// Passes keep coming (requeues, a poke); the other manager still never writes.
		poke(g, c, "scope")
		g.Consistently(func(g Gomega) { g.Expect(writers(g, c)).NotTo(ContainElement(tc.other)) }, 2*time.Second, tick).Should(Succeed())
	}
}

// poke changes an annotation of c: a pass of its controller with nothing to do.
func poke(g Gomega, c *v1beta2.EtcdCluster, value string) {
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"metadata":{"annotations":{"test/poke":%q}}}`, value))
	g.Expect(env.Client.Patch(context.Background(), c, patch)).To(Succeed())
}

func TestEtcdClusterCachesOnlyTheObjectsOfClusters(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := applySample(t, "etcd_v1beta2_etcdcluster.yaml", ns)
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses", Namespace: ns}}
	g.Expect(env.Client.Create(ctx, foreign)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app"}}}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		list := &corev1.ConfigMapList{}
		g.Expect(cached.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		g.Expect(list.Items).To(HaveLen(1))
		g.Expect(list.Items[0].Name).To(Equal(c.Name + "-members"))
	}, timeout, tick).Should(Succeed())
	pods := &corev1.PodList{}
	g.Expect(cached.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
	g.Expect(pods.Items).To(BeEmpty(), "a pod that is not a member stays out of the cache")
}

// expectDegraded waits until c is Degraded for reason, with a message containing message.
func expectDegraded(t *testing.T, c *v1beta2.EtcdCluster, reason, message string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		get(g, c)
		degraded := conditions.Get(c, v1beta2.DegradedCondition)
		g.Expect(degraded).NotTo(BeNil())
		g.Expect(degraded.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(degraded.Reason).To(Equal(reason))
		g.Expect(degraded.Message).To(ContainSubstring(message))
	}, timeout, tick).Should(Succeed())
}

func TestEtcdClusterNeitherAdoptsNorOverwritesAnObjectItDoesNotControl(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	// Someone's Service under the name of the cluster's client Service; no labels, no owner.
	taken := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "example-etcd-cluster-client", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
	g.Expect(env.Client.Create(ctx, taken)).To(Succeed())
	c := applySample(t, "etcd_v1beta2_etcdcluster.yaml", ns)
	expectDegraded(t, c, v1beta2.ReasonObjectNotOwned, "Service example-etcd-cluster-client already exists")
	g.Expect(conditions.Get(c, v1beta2.ReadyCondition).Reason).To(Equal(v1beta2.ReasonObjectNotOwned))
	poke(g, c, "1")
	g.Consistently(func(g Gomega) {
		get(g, taken)
		g.Expect(taken.OwnerReferences).To(BeEmpty(), "not adopted")
		g.Expect(taken.Spec.Ports).To(HaveLen(1))
		g.Expect(taken.Spec.Ports[0].Port).To(BeEquivalentTo(80), "not overwritten")
	}, 2*time.Second, tick).Should(Succeed())
	g.Expect(events.Emitted(c, v1beta2.ReasonObjectNotOwned)).To(Equal(1), "one Warning, not one per pass")

	// Labelled for the cluster but controlled by nothing: still not adopted.
	g.Expect(env.Client.Delete(ctx, taken)).To(Succeed())
	members := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other-members", Namespace: ns,
		Labels: map[string]string{v1beta2.ClusterLabel: "other"}}}
	g.Expect(env.Client.Create(ctx, members)).To(Succeed())
	other := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: ns}}
	g.Expect(env.Client.Create(ctx, other)).To(Succeed())
	expectDegraded(t, other, v1beta2.ReasonObjectNotOwned, "ConfigMap other-members already exists and is controlled by no EtcdCluster")

	// Once the name is free, the next pass creates the cluster's own object.
	poke(g, c, "2")
	g.Eventually(func(g Gomega) {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "example-etcd-cluster-client", Namespace: ns}}
		get(g, svc)
		g.Expect(metav1.IsControlledBy(svc, c)).To(BeTrue())
	}, timeout, tick).Should(Succeed())
}

func TestEtcdClusterWhoseStatefulSetTheAPIRejectsIsDegradedOnceAndNotRetried(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	// Requests above limits: the CRD lets it through, the StatefulSet API refuses it.
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "invalid", Namespace: ns}}
	c.Spec.Pod = &v1beta2.PodPolicy{Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
	}}
	g.Expect(env.Client.Create(ctx, c)).To(Succeed())
	expectDegraded(t, c, v1beta2.ReasonObjectRejected, "must be less than or equal to cpu limit")
	// Terminal: one try per pass that events trigger (the first; one for the objects it
	// created; one for its status write), however late a loaded machine runs them, where a
	// retried error would try again and again.
	g.Consistently(func() int { return len(logs.Since(0, ns, "Creating StatefulSet")) }, 4*time.Second, tick).
		Should(BeNumerically("<=", 3), "terminal: not retried")
	g.Expect(events.Emitted(c, v1beta2.ReasonObjectRejected)).To(Equal(1))
}

func TestEtcdClusterMakesNoWritesAndLogsNothingInSteadyState(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "steady", Namespace: ns}}
	c.Spec.Size = 1
	runLoopbackMember(t, c)
	// The volume the StatefulSet would have made for member 0: without it the member is lost.
	g.Expect(env.Client.Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data-steady-0", Namespace: ns, Labels: selectorLabels(c)},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
	})).To(Succeed())
	g.Expect(env.Client.Create(ctx, c)).To(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, c)
		g.Expect(conditions.IsTrue(c, v1beta2.ReadyCondition)).To(BeTrue(), "%+v", c.Status.Conditions)
		g.Expect(c.Status.ReadyMembers).To(BeEquivalentTo(1))
	}, timeout, tick).Should(Succeed())
	g.Expect(logs.Since(0, ns, "Creating StatefulSet")).To(HaveLen(1), "each write is logged once")

	time.Sleep(time.Second) // let the passes the last writes triggered finish
	before, mark := writes.Writes(), logs.Len()
	for i := range 5 {
		poke(g, c, strconv.Itoa(i))
		_, err := reconciler.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(c)})
		g.Expect(err).NotTo(HaveOccurred())
	}
	time.Sleep(time.Second)
	g.Expect(writes.Writes()-before).To(BeZero(), "a Ready cluster whose spec did not change is not written")
	g.Expect(logs.Since(mark, ns)).To(BeEmpty(), "an idle pass logs nothing")
	get(g, c)
	g.Expect(conditions.IsTrue(c, v1beta2.ReadyCondition)).To(BeTrue())
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
