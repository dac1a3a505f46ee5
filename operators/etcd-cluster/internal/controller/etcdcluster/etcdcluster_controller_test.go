package etcdcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/membership"
	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/ensure"
	"github.com/quintet-operators/quintet/shared/testenv"
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
	g.Expect(pod.Containers[0].Image).To(Equal("gcr.io/etcd-development/etcd:v3.6.8"))
	// Members start only when the operator lifts their gate, restart only when it deletes
	// them, and keep their volumes when the StatefulSet goes.
	g.Expect(pod.SchedulingGates).To(ConsistOf(corev1.PodSchedulingGate{Name: v1beta2.StartGate}))
	g.Expect(sts.Spec.UpdateStrategy.Type).To(Equal(appsv1.OnDeleteStatefulSetStrategyType))
	g.Expect(sts.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted).To(Equal(appsv1.RetainPersistentVolumeClaimRetentionPolicyType))
	g.Expect(sts.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled).To(Equal(appsv1.DeletePersistentVolumeClaimRetentionPolicyType))
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

	// envtest runs no StatefulSet controller: make member 0's pod as it would, behind its gate.
	member := expectStarted(t, sts, 0, "new")
	g.Expect(member.Annotations).To(HaveKeyWithValue(v1beta2.InitialClusterAnnotation, c.Name+"-0=http://"+c.Name+"-0."+c.Name+"."+ns+".svc:2380"))

	// No etcd runs in envtest: the status says so rather than pretending.
	g.Eventually(func(g Gomega) {
		get(g, c)
		g.Expect(c.Status.ObservedGeneration).To(Equal(c.Generation))
		g.Expect(conditions.Get(c, v1beta2.AvailableCondition)).NotTo(BeNil())
		g.Expect(conditions.Get(c, v1beta2.AvailableCondition).Reason).To(Equal(v1beta2.ReasonMembersUnreachable))
		g.Expect(conditions.IsTrue(c, conditions.ReadyCondition)).To(BeFalse())
		g.Expect(c.Status.Phase).To(Equal(v1beta2.PhaseCreating))
		g.Expect(c.Status.ClientService).To(Equal(c.Name + "-client"))
	}, timeout, tick).Should(Succeed())
}

// memberPod makes the pod of ordinal from the StatefulSet's template, as the StatefulSet
// controller would (envtest runs none).
func memberPod(t *testing.T, sts *appsv1.StatefulSet, ordinal int) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: *sts.Spec.Template.ObjectMeta.DeepCopy(),
		Spec:       *sts.Spec.Template.Spec.DeepCopy(),
	}
	pod.Name, pod.Namespace = fmt.Sprintf("%s-%d", sts.Name, ordinal), sts.Namespace
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + pod.Name}}})
	if err := env.Client.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// expectStarted makes the pod of ordinal and waits until the operator lifts its gate,
// telling it to join with state.
func expectStarted(t *testing.T, sts *appsv1.StatefulSet, ordinal int, state string) *corev1.Pod {
	t.Helper()
	g := NewWithT(t)
	member := memberPod(t, sts, ordinal)
	g.Eventually(func(g Gomega) {
		get(g, member)
		g.Expect(member.Spec.SchedulingGates).To(BeEmpty(), "the operator starts the member")
	}, timeout, tick).Should(Succeed())
	g.Expect(member.Annotations).To(HaveKeyWithValue(v1beta2.InitialClusterStateAnnotation, state))
	return member
}

// memberClaim makes the volume claim of ordinal of cluster name, holding the data of member id (none when 0).
func memberClaim(t *testing.T, ns, name string, ordinal int, id string) {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("data-%s-%d", name, ordinal), Namespace: ns,
			Labels: map[string]string{v1beta2.ClusterLabel: name, "app": "etcd"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if id != "" {
		pvc.Annotations = map[string]string{v1beta2.MemberIDAnnotation: id}
	}
	if err := env.Client.Create(context.Background(), pvc); err != nil {
		t.Fatal(err)
	}
}

func TestEtcdClusterNeverStartsANewClusterOverVolumesWithData(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	// The StatefulSet of a 3-member cluster was deleted; its volumes stayed.
	for o, id := range []string{"a1", "b2", "c3"} {
		memberClaim(t, ns, "survivor", o, id)
	}
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "survivor", Namespace: ns}}
	g.Expect(env.Client.Create(context.Background(), c)).To(Succeed())

	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: ns}}
	g.Eventually(func(g Gomega) { get(g, sts) }, timeout, tick).Should(Succeed())
	g.Expect(*sts.Spec.Replicas).To(BeEquivalentTo(3), "the workloads of the three volumes are made again, not one new member")
	expectStarted(t, sts, 1, "existing")
	g.Consistently(func(g Gomega) {
		get(g, sts)
		g.Expect(*sts.Spec.Replicas).To(BeEquivalentTo(3))
	}, 2*time.Second, tick).Should(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, c)
		g.Expect(conditions.Get(c, conditions.ProgressingCondition)).NotTo(BeNil())
	}, timeout, tick).Should(Succeed())
}

func TestEtcdClusterMadeAgainUnderItsNameStartsOnlyOnceTheEarlierClustersVolumesAreGone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	// A cluster "again" was deleted; the garbage collector (envtest runs none) has not yet
	// deleted the volumes it owned.
	earlier := metav1.OwnerReference{APIVersion: v1beta2.GroupVersion.String(), Kind: "EtcdCluster", Name: "again", UID: "a-deleted-cluster"}
	for o, id := range []string{"a1", "b2", "c3"} {
		memberClaim(t, ns, "again", o, id)
		claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("data-again-%d", o), Namespace: ns}}
		get(g, claim)
		claim.OwnerReferences = []metav1.OwnerReference{earlier}
		g.Expect(env.Client.Update(ctx, claim)).To(Succeed())
	}
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "again", Namespace: ns}}
	g.Expect(env.Client.Create(ctx, c)).To(Succeed())

	g.Eventually(func(g Gomega) {
		get(g, c)
		progressing := conditions.Get(c, conditions.ProgressingCondition)
		g.Expect(progressing).NotTo(BeNil())
		g.Expect(progressing.Message).To(ContainSubstring("an earlier cluster's of this name"))
	}, timeout, tick).Should(Succeed())
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: ns}}
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(sts), sts))).To(BeTrue(),
		"no member starts on the earlier cluster's data")

	// The garbage collector deletes them.
	for o := range 3 {
		claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("data-again-%d", o), Namespace: ns}}
		get(g, claim)
		claim.Finalizers = nil
		g.Expect(env.Client.Update(ctx, claim)).To(Succeed())
		g.Expect(env.Client.Delete(ctx, claim)).To(Succeed())
	}
	g.Eventually(func(g Gomega) { get(g, sts) }, timeout, tick).Should(Succeed())
	g.Expect(*sts.Spec.Replicas).To(BeEquivalentTo(1), "a new cluster, bootstrapped with one member")
	expectStarted(t, sts, 0, "new")
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
			&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: c.Namespace}},
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
	foreign := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
	g.Expect(env.Client.Create(ctx, foreign)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app"}}}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		list := &corev1.ServiceList{}
		g.Expect(cached.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		names := make([]string, 0, len(list.Items))
		for _, svc := range list.Items {
			names = append(names, svc.Name)
		}
		g.Expect(names).To(ConsistOf(c.Name, c.Name+"-client"))
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
		degraded := conditions.Get(c, conditions.DegradedCondition)
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
	expectDegraded(t, c, conditions.ReasonObjectNotOwned, "Service example-etcd-cluster-client already exists")
	g.Expect(conditions.Get(c, conditions.ReadyCondition).Reason).To(Equal(conditions.ReasonObjectNotOwned))
	poke(g, c, "1")
	g.Consistently(func(g Gomega) {
		get(g, taken)
		g.Expect(taken.OwnerReferences).To(BeEmpty(), "not adopted")
		g.Expect(taken.Spec.Ports).To(HaveLen(1))
		g.Expect(taken.Spec.Ports[0].Port).To(BeEquivalentTo(80), "not overwritten")
	}, 2*time.Second, tick).Should(Succeed())
	g.Expect(events.Emitted(c, conditions.ReasonObjectNotOwned)).To(Equal(1), "one Warning, not one per pass")

	// Labelled for the cluster but controlled by nothing: still not adopted.
	g.Expect(env.Client.Delete(ctx, taken)).To(Succeed())
	peer := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: ns,
		Labels: map[string]string{v1beta2.ClusterLabel: "other"}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
	g.Expect(env.Client.Create(ctx, peer)).To(Succeed())
	other := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: ns}}
	g.Expect(env.Client.Create(ctx, other)).To(Succeed())
	expectDegraded(t, other, conditions.ReasonObjectNotOwned, "Service other already exists and is controlled by no EtcdCluster")

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
	expectDegraded(t, c, conditions.ReasonObjectRejected, "must be less than or equal to cpu limit")
	// Terminal: one try per pass that events trigger (the first; one per object it created:
	// two Services, the PodDisruptionBudget and the NetworkPolicy; one for its status write),
	// however late a loaded machine runs them, where a retried error would be tried about ten
	// times in 5 s of backoff.
	g.Consistently(func() int { return len(logs.Since(0, ns, "Creating StatefulSet")) }, 4*time.Second, tick).
		Should(BeNumerically("<=", 6), "terminal: not retried")
	g.Expect(events.Emitted(c, conditions.ReasonObjectRejected)).To(Equal(1))
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
		g.Expect(conditions.IsTrue(c, conditions.ReadyCondition)).To(BeTrue(), "%+v", c.Status.Conditions)
		g.Expect(c.Status.ReadyMembers).To(BeEquivalentTo(1))
	}, timeout, tick).Should(Succeed())
	g.Expect(logs.Since(0, ns, "Creating StatefulSet")).To(HaveLen(1), "each write is logged once")
	// Both Services, the PodDisruptionBudget, the NetworkPolicy and the StatefulSet created,
	// named in the Created Event of the pass that made them (one per pass, not per object).
	created := strings.Join(events.Notes(c, ensure.EventCreated), ", ")
	for kind, n := range map[string]int{"Service": 2, "PodDisruptionBudget": 1, "NetworkPolicy": 1, "StatefulSet": 1} {
		g.Expect(strings.Count(created, kind+" ")).To(Equal(n), "%s in %q", kind, created)
	}
	g.Expect(events.Emitted(c, ensure.EventCreated)).To(BeNumerically("<", 5))

	time.Sleep(time.Second) // let the passes the last writes triggered finish
	before, mark, recorded := writes.WritesIn(ns), logs.Len(), events.Emitted(c, ensure.EventCreated)+events.Emitted(c, ensure.EventUpdated)
	for i := range 5 {
		poke(g, c, strconv.Itoa(i))
		_, err := reconciler.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(c)})
		g.Expect(err).NotTo(HaveOccurred())
	}
	time.Sleep(time.Second)
	g.Expect(writes.WritesIn(ns)-before).To(BeZero(), "a Ready cluster whose spec did not change is not written")
	g.Expect(logs.Since(mark, ns)).To(BeEmpty(), "an idle pass logs nothing")
	g.Expect(events.Emitted(c, ensure.EventCreated)+events.Emitted(c, ensure.EventUpdated)).To(Equal(recorded), "no write, no Event")
	get(g, c)
	g.Expect(conditions.IsTrue(c, conditions.ReadyCondition)).To(BeTrue())
}

// TestEtcdClusterWhoseRunningMemberNeverAnswersMakesNoWritesInSteadyState is the case of a
// cluster on kwok nodes (the scale benchmark's): member 0's pod is Running and Ready, but no
// etcd answers at its address. Once the member is started and the status says so, passes
// (requeues, pokes) write nothing, log nothing and emit no Event.
func TestEtcdClusterWhoseRunningMemberNeverAnswersMakesNoWritesInSteadyState(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := applySample(t, "etcd_v1beta2_etcdcluster.yaml", ns)
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: ns}}
	g.Eventually(func(g Gomega) { get(g, sts) }, timeout, tick).Should(Succeed())
	member := expectStarted(t, sts, 0, "new")
	memberClaim(t, ns, c.Name, 0, "")
	// What kwok does with a pod on its nodes: Running and Ready, with an address nothing answers at.
	now := metav1.Now()
	member.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.10", StartTime: &now,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: member.Spec.Containers[0].Name, Ready: true, Started: ptr.To(true),
			Image: member.Spec.Containers[0].Image, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}}
	g.Expect(env.Client.Status().Update(ctx, member)).To(Succeed())
	// Starting member 0 is its pass's status (Progressing True), and the next pass's (False:
	// it does not answer). Each pass waits for the member up to the request timeout: the
	// cluster is settled once it logged no write (each is logged) for longer than that.
	g.Eventually(func(g Gomega) {
		mark := logs.Len()
		time.Sleep(4 * time.Second)
		g.Expect(logs.Since(mark, ns)).To(BeEmpty(), "still starting")
		get(g, c)
		p := conditions.Get(c, conditions.ProgressingCondition)
		g.Expect(p).NotTo(BeNil())
		g.Expect(p.Reason).To(Equal(v1beta2.ReasonMembersUnreachable), "%+v", c.Status.Conditions)
	}, 2*timeout, tick).Should(Succeed())

	reasons := []string{ensure.EventCreated, ensure.EventUpdated, v1beta2.ReasonMembersUnreachable,
		string(membership.ActionBootstrap), string(membership.ActionRelease)}
	emitted := func() (n int) {
		for _, reason := range reasons {
			n += events.Emitted(c, reason)
		}
		return n
	}
	// Passes of their own, their writes counted apart from other tests' clusters; the
	// manager's (the pokes') show in the log.
	own := testenv.CountWrites(reconciler.Client)
	r := &Reconciler{Client: own, APIReader: reconciler.APIReader, Recorder: reconciler.Recorder, Addresses: testAddresses,
		OperatorImage: testOperatorImage, ManagerNamespace: testManagerNamespace}
	mark, recorded, status := logs.Len(), emitted(), c.Status.DeepCopy()
	for i := range 3 {
		poke(g, c, strconv.Itoa(i))
		_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(c)})
		g.Expect(err).NotTo(HaveOccurred())
	}
	time.Sleep(time.Second)
	g.Expect(own.Writes()).To(BeZero(), "a cluster whose running member never answers is not written on every pass")
	g.Expect(logs.Since(mark, ns)).To(BeEmpty(), "an idle pass logs nothing (and so writes nothing)")
	g.Expect(emitted()).To(Equal(recorded), "no write, no Event")
	get(g, c)
	g.Expect(c.Status).To(Equal(*status))
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
		g.Expect(conditions.Get(c, conditions.ProgressingCondition).Reason).To(Equal(v1beta2.ReasonPaused))
	}, timeout, tick).Should(Succeed())
	g.Consistently(func() error {
		return env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "paused"}, &appsv1.StatefulSet{})
	}, 2*time.Second, tick).ShouldNot(Succeed(), "a paused cluster gets no StatefulSet")
}

// A change of the status alone starts no pass: the pass writes it, and a member's database
// size in it changes under writes, so each pass would start the next.
func TestAChangeOfAnEtcdClustersStatusAloneStartsNoPass(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "status-only", Namespace: newNamespace(t)}}
	c.Spec.Paused = true // observed only, asked again every 30 s
	g.Expect(env.Client.Create(ctx, c)).To(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, c)
		g.Expect(c.Status.Phase).To(Equal(v1beta2.PhasePaused))
	}, timeout, tick).Should(Succeed())
	ready := conditions.Get(c, conditions.ReadyCondition)
	ready.Message = "written by the test"
	g.Expect(env.Client.Status().Update(ctx, c)).To(Succeed())
	g.Consistently(func(g Gomega) {
		get(g, c)
		g.Expect(conditions.Get(c, conditions.ReadyCondition).Message).To(Equal("written by the test"), "a pass rewrote the status")
	}, 2*time.Second, tick).Should(Succeed())
}

// A namespace being deleted refuses the objects a pass would make: the pass ends without an
// error to retry, as the namespace's deletion takes the cluster too.
func TestEtcdClusterInANamespaceBeingDeletedIsNotRetried(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "going", Namespace: ns}}
	c.Spec.Paused = true // observed only: nothing made yet
	g.Expect(env.Client.Create(ctx, c)).To(Succeed())
	g.Eventually(func(g Gomega) {
		get(g, c)
		g.Expect(c.Status.Phase).To(Equal(v1beta2.PhasePaused))
	}, timeout, tick).Should(Succeed())
	// envtest runs no namespace controller: the namespace stays Terminating.
	g.Expect(env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	g.Expect(env.Client.Patch(ctx, c, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"paused":false}}`)))).To(Succeed())
	g.Eventually(func(g Gomega) {
		cachedCluster := &v1beta2.EtcdCluster{}
		g.Expect(cached.Get(ctx, client.ObjectKeyFromObject(c), cachedCluster)).To(Succeed())
		g.Expect(cachedCluster.Spec.Paused).To(BeFalse())
	}, timeout, tick).Should(Succeed())
	result, err := reconciler.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(c)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(result).To(BeZero())
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
		{"version without learners", map[string]any{"version": "3.4.27"}, "etcd 3.5.0 or later is supported"},
		{"the tutorial's version", map[string]any{"version": "3.2.13"}, "etcd 3.5.0 or later is supported"},
		{"replacement at the first hiccup", map[string]any{"replaceUnreachableAfter": "10s"}, "replaceUnreachableAfter must be at least 1m"},
		{"managed flag", map[string]any{"pod": map[string]any{"etcdArgs": []any{"--data-dir=/tmp"}}}, "etcdArgs must not set flags the operator manages"},
		{"not a flag", map[string]any{"pod": map[string]any{"etcdArgs": []any{"quota"}}}, "each etcdArgs entry must be a flag starting with --"},
		{"a TLS flag", map[string]any{"pod": map[string]any{"etcdArgs": []any{"--client-cert-auth=false"}}}, "see spec.TLS"},
		{"a config file replacing the managed flags", map[string]any{"pod": map[string]any{"etcdArgs": []any{"--config-file=/var/run/etcd/x.yaml"}}}, "or --config-file, which would replace them all"},
		{"discovery joining another cluster", map[string]any{"pod": map[string]any{"etcdArgs": []any{"--discovery-srv=example.com"}}}, "initial cluster and discovery"},
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

func TestEtcdClusterRefusesAStorageChangeAtAdmission(t *testing.T) {
	g := NewWithT(t)
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "storage", Namespace: newNamespace(t)}}
	c.Spec.Paused = true // only admission matters here
	size := resource.MustParse("2Gi")
	c.Spec.Pod = &v1beta2.PodPolicy{Storage: &v1beta2.StorageSpec{Size: &size}}
	g.Expect(env.Client.Create(context.Background(), c)).To(Succeed())
	for _, patch := range []string{`{"spec":{"pod":{"storage":{"size":"4Gi"}}}}`, `{"spec":{"pod":{"storage":null}}}`, `{"spec":{"pod":{"storage":{"storageClassName":"fast"}}}}`} {
		err := env.Client.Patch(context.Background(), c.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(patch)))
		g.Expect(err).To(MatchError(ContainSubstring("pod.storage cannot change once the cluster exists")), patch)
	}
	g.Expect(env.Client.Patch(context.Background(), c.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"size":5}}`)))).To(Succeed(),
		"other changes are still allowed")
}

func TestEtcdClusterDefaults(t *testing.T) {
	g := NewWithT(t)
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "defaults", Namespace: newNamespace(t)}}
	c.Spec.Paused = true // only the defaults matter here
	c.Spec.Pod = &v1beta2.PodPolicy{Storage: &v1beta2.StorageSpec{}}
	g.Expect(env.Client.Create(context.Background(), c)).To(Succeed())
	get(g, c)
	g.Expect(c.Spec.Pod.AntiAffinity).To(Equal(v1beta2.AntiAffinityPreferred))
	g.Expect(c.Spec.Pod.Storage.Size.String()).To(Equal(v1beta2.DefaultStorageSize), "a volume that fits etcd's default 2 GiB quota")
	g.Expect(c.Spec.Size).To(BeEquivalentTo(3))
	g.Expect(c.Spec.Version).To(Equal(v1beta2.DefaultVersion))
	g.Expect(c.Spec.Repository).To(Equal(v1beta2.DefaultRepository))
}
