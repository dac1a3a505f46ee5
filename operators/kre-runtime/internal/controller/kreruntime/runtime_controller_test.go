package kreruntime

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/ensure"
	"github.com/quintet-operators/quintet/shared/testenv"
)

const (
	timeout = 20 * time.Second
	tick    = 100 * time.Millisecond
)

func newNamespace(t *testing.T) string { return env.NewNamespace(t, "kre-runtime-test") }

// applySample creates the named sample file of config/samples in ns (strict field validation).
func applySample(t *testing.T, ns, file string) *unstructured.Unstructured {
	t.Helper()
	return env.ApplyFile(t, filepath.Join("..", "..", "..", "config", "samples", file), ns)
}

func getRuntime(g Gomega, ns, name string) *v1alpha1.Runtime {
	rt := &v1alpha1.Runtime{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, rt)).To(Succeed())
	return rt
}

// statefulSetsOf waits for the three StatefulSets of a Runtime and returns them by name.
func statefulSetsOf(t *testing.T, ns string) map[string]*appsv1.StatefulSet {
	t.Helper()
	sets := map[string]*appsv1.StatefulSet{}
	NewWithT(t).Eventually(func(g Gomega) {
		for _, name := range []string{"kre-mongo", "kre-nats", "kre-minio"} {
			s := &appsv1.StatefulSet{}
			g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, s)).To(Succeed())
			sets[name] = s
		}
	}, timeout, tick).Should(Succeed())
	return sets
}

// markReady does what the StatefulSet controller and the kubelets would: report every
// replica of each StatefulSet ready at its current generation. envtest runs neither.
func markReady(g Gomega, ns string) {
	ctx := context.Background()
	list := &appsv1.StatefulSetList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	for i := range list.Items {
		s := &list.Items[i]
		n := ptr.Deref(s.Spec.Replicas, 1)
		s.Status = appsv1.StatefulSetStatus{ObservedGeneration: s.Generation, Replicas: n, ReadyReplicas: n,
			CurrentReplicas: n, UpdatedReplicas: n, AvailableReplicas: n}
		g.Expect(env.Client.Status().Update(ctx, s)).To(Succeed())
	}
}

func TestKREsSampleAppliesVerbatimAndMakesItsInfrastructure(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	applySample(t, ns, "kre_v1alpha1_runtime.yaml")

	sets := statefulSetsOf(t, ns)
	for name, replicas := range map[string]int32{"kre-mongo": 1, "kre-nats": 2, "kre-minio": 1} {
		s := sets[name]
		g.Expect(s.Spec.Replicas).To(HaveValue(Equal(replicas)), name)
		claim := s.Spec.VolumeClaimTemplates[0]
		g.Expect(claim.Spec.StorageClassName).To(HaveValue(Equal("standard")), name)
		g.Expect(claim.Spec.Resources.Requests[corev1.ResourceStorage]).To(Equal(resource.MustParse("2Gi")), name)
		g.Expect(s.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted).To(Equal(appsv1.RetainPersistentVolumeClaimRetentionPolicyType))
		pod := s.Spec.Template.Spec
		g.Expect(*pod.SecurityContext.RunAsNonRoot).To(BeTrue())
		g.Expect(*pod.Containers[0].SecurityContext.AllowPrivilegeEscalation).To(BeFalse())
		for _, e := range pod.Containers[0].Env {
			g.Expect(e.Value).NotTo(Or(Equal("123456"), Equal("12345678")), "credentials reach pods only through Secrets")
		}
		g.Expect(pod.Containers[0].ReadinessProbe).NotTo(BeNil(), name)
		g.Expect(pod.Containers[0].LivenessProbe).NotTo(BeNil(), name)
	}
	// MongoDB is probed with a ping, MinIO on its health endpoints.
	mongoProbe := sets["kre-mongo"].Spec.Template.Spec.Containers[0].LivenessProbe
	g.Expect(mongoProbe.Exec.Command).To(Equal([]string{"mongosh", "--quiet", "--norc", "--eval", "db.adminCommand('ping').ok"}))
	minio := sets["kre-minio"].Spec.Template.Spec.Containers[0]
	g.Expect(minio.ReadinessProbe.HTTPGet.Path).To(Equal("/minio/health/ready"))
	g.Expect(minio.LivenessProbe.HTTPGet.Path).To(Equal("/minio/health/live"))
	g.Expect(sets["kre-nats"].Spec.Template.Spec.Containers[0].Args).To(ContainElement(
		"--routes=nats://kre-nats-0.kre-nats-headless:6222,nats://kre-nats-1.kre-nats-headless:6222"))
	for _, name := range []string{"kre-mongo", "kre-mongo-headless", "kre-nats", "kre-nats-headless", "kre-minio", "kre-minio-headless"} {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Service{})).To(Succeed(), name)
	}

	// The inline credentials are copied into Secrets, and flagged.
	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kre-mongo-credentials"}, secret)).To(Succeed())
	g.Expect(secret.Data).To(Equal(map[string][]byte{"username": []byte("admin"), "password": []byte("123456")}))
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kre-minio-credentials"}, secret)).To(Succeed())
	g.Expect(secret.Data).To(Equal(map[string][]byte{"accessKey": []byte("admin"), "secretKey": []byte("12345678")}))
	var rt *v1alpha1.Runtime
	g.Eventually(func(g Gomega) {
		rt = getRuntime(g, ns, "example4")
		inline := conditions.Get(rt, v1alpha1.InlineCredentialsCondition)
		g.Expect(inline).NotTo(BeNil())
		g.Expect(inline.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(inline.Message).To(ContainSubstring("spec.mongo.credentials and spec.minio.credentials are inline"))
	}, timeout, tick).Should(Succeed())
	g.Expect(events.Emitted(rt, v1alpha1.ReasonInlineCredentials)).To(Equal(1))

	// Ready once every component is.
	g.Expect(conditions.IsTrue(rt, conditions.ReadyCondition)).To(BeFalse())
	markReady(g, ns)
	g.Eventually(func(g Gomega) {
		rt = getRuntime(g, ns, "example4")
		g.Expect(conditions.Get(rt, conditions.ReadyCondition)).To(HaveField("Status", metav1.ConditionTrue))
		g.Expect(conditions.Get(rt, conditions.ReadyCondition).ObservedGeneration).To(Equal(rt.Generation))
	}, timeout, tick).Should(Succeed())
	g.Expect(rt.Status.NATSStreaming).To(Equal(v1alpha1.ComponentStatus{Replicas: 2, ReadyReplicas: 2, Ready: true,
		Service: "kre-nats." + ns + ".svc", Endpoint: "nats://kre-nats." + ns + ".svc:4222"}))
	g.Expect(rt.Status.Mongo.Endpoint).To(Equal("mongodb://kre-mongo." + ns + ".svc:27017"))
	g.Expect(rt.Status.MinIO.Endpoint).To(Equal("http://kre-minio." + ns + ".svc:9000"))
	g.Expect(rt.Status.Mongo.CredentialsSecret).To(Equal("kre-mongo-credentials"))

	// The secrets appear nowhere else: not in status, Events or logs.
	status, err := json.Marshal(rt.Status)
	g.Expect(err).NotTo(HaveOccurred())
	recorded := &eventsv1.EventList{}
	g.Expect(env.Client.List(ctx, recorded, client.InNamespace(ns))).To(Succeed())
	for _, text := range append([]string{string(status)}, logs.Since(0, ns)...) {
		g.Expect(text).NotTo(Or(ContainSubstring("123456"), ContainSubstring("12345678")))
	}
	for _, e := range recorded.Items {
		g.Expect(e.Note).NotTo(ContainSubstring("123456"))
	}
}

func TestAnEmptyRuntimeGetsDefaultsAndGeneratedCredentialsThatStay(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "Runtime",
		"metadata": map[string]any{"name": "empty", "namespace": ns}, "spec": map[string]any{},
	}}
	g.Expect(env.Client.Create(ctx, u)).To(Succeed())
	rt := getRuntime(g, ns, "empty")
	g.Expect(rt.Spec.NATSStreaming.Image).To(Equal(v1alpha1.DefaultNATSImage))
	g.Expect(rt.Spec.Mongo.Storage.Size).To(Equal(resource.MustParse("1Gi")))
	g.Expect(rt.Spec.VolumeRetention).To(Equal(v1alpha1.VolumeRetain))

	sets := statefulSetsOf(t, ns)
	g.Expect(sets["kre-mongo"].Spec.Template.Spec.Containers[0].Image).To(Equal(v1alpha1.DefaultMongoImage))
	g.Expect(sets["kre-minio"].Spec.Template.Spec.Containers[0].Image).To(Equal(v1alpha1.DefaultMinIOImage))
	g.Expect(sets["kre-mongo"].Spec.VolumeClaimTemplates[0].Spec.StorageClassName).To(BeNil(), "the cluster's default class")

	generated := &corev1.Secret{}
	g.Eventually(func() error {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kre-minio-credentials"}, generated)
	}, timeout, tick).Should(Succeed())
	g.Expect(generated.Data["secretKey"]).To(HaveLen(generatedSecretLength))
	g.Eventually(func(g Gomega) {
		inline := conditions.Get(getRuntime(g, ns, "empty"), v1alpha1.InlineCredentialsCondition)
		g.Expect(inline).To(HaveField("Status", metav1.ConditionFalse))
	}, timeout, tick).Should(Succeed())

	// Later passes keep them: the data was initialised with them.
	poke(g, ns, "empty")
	time.Sleep(time.Second)
	again := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(generated), again)).To(Succeed())
	g.Expect(again.Data).To(Equal(generated.Data))

	// With volumeRetention Retain they outlive the Runtime, as its volumes do: a Runtime made
	// again with the same name uses them, and reports nothing amiss.
	g.Expect(generated.OwnerReferences).To(BeEmpty(), "kept when the Runtime is deleted")
	g.Expect(env.Client.Delete(ctx, u)).To(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(u), u)) }, timeout, tick).Should(BeTrue())
	collectGarbage(g, ns, u.GetUID())
	remade := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "Runtime",
		"metadata": map[string]any{"name": "empty", "namespace": ns}, "spec": map[string]any{},
	}}
	g.Expect(env.Client.Create(ctx, remade)).To(Succeed())
	g.Eventually(func(g Gomega) {
		rt := getRuntime(g, ns, "empty")
		g.Expect(rt.UID).NotTo(Equal(u.GetUID()))
		g.Expect(rt.Status.MinIO.CredentialsSecret).To(Equal("kre-minio-credentials"))
		g.Expect(conditions.Get(rt, conditions.DegradedCondition)).To(HaveField("Status", metav1.ConditionFalse))
	}, timeout, tick).Should(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(generated), again)).To(Succeed())
	g.Expect(again.Data).To(Equal(generated.Data))
}

// collectGarbage deletes what the owner uid controlled, as the garbage collector would;
// envtest runs none.
func collectGarbage(g Gomega, ns string, uid types.UID) {
	ctx := context.Background()
	for _, list := range []client.ObjectList{&appsv1.StatefulSetList{}, &corev1.ServiceList{}, &corev1.SecretList{}} {
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		g.Expect(meta.EachListItem(list, func(o runtime.Object) error {
			obj := o.(client.Object)
			if owner := metav1.GetControllerOf(obj); owner != nil && owner.UID == uid {
				return client.IgnoreNotFound(env.Client.Delete(ctx, obj))
			}
			return nil
		})).To(Succeed())
	}
}

func TestGeneratedCredentialsGoWithTheRuntimeWhenItsVolumesDo(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	rt := &v1alpha1.Runtime{ObjectMeta: metav1.ObjectMeta{Name: "ephemeral", Namespace: ns}}
	rt.Spec.VolumeRetention = v1alpha1.VolumeDelete
	g.Expect(env.Client.Create(ctx, rt)).To(Succeed())
	g.Eventually(func(g Gomega) {
		secret := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kre-mongo-credentials"}, secret)).To(Succeed())
		g.Expect(metav1.IsControlledBy(secret, rt)).To(BeTrue(), "deleted with the Runtime, as its volumes are")
	}, timeout, tick).Should(Succeed())
}

func TestARuntimeWithSecretRefsLeavesTheUsersSecretsAlone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	rt := &v1alpha1.Runtime{ObjectMeta: metav1.ObjectMeta{Name: "refs", Namespace: ns}}
	rt.Spec.Mongo.Credentials.SecretRef = &corev1.LocalObjectReference{Name: "my-mongo"}
	rt.Spec.MinIO.Credentials.SecretRef = &corev1.LocalObjectReference{Name: "my-minio"}
	g.Expect(env.Client.Create(ctx, rt)).To(Succeed())
	sets := statefulSetsOf(t, ns)
	mongoEnv := sets["kre-mongo"].Spec.Template.Spec.Containers[0].Env
	g.Expect(mongoEnv).To(ContainElement(SecretEnv("MONGO_INITDB_ROOT_PASSWORD", "my-mongo", MongoPasswordKey)))
	g.Eventually(func(g Gomega) {
		rt := getRuntime(g, ns, "refs")
		g.Expect(rt.Status.MinIO.CredentialsSecret).To(Equal("my-minio"))
	}, timeout, tick).Should(Succeed())
	secrets := &corev1.SecretList{}
	g.Expect(env.Client.List(ctx, secrets, client.InNamespace(ns))).To(Succeed())
	g.Expect(secrets.Items).To(BeEmpty(), "the operator makes no Secret when the user names one")
}

func poke(g Gomega, ns, name string) {
	patch := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"metadata":{"labels":{"poke":"%d"}}}`, time.Now().UnixNano()))
	g.Expect(env.Client.Patch(context.Background(), &v1alpha1.Runtime{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, patch)).To(Succeed())
}

func TestARuntimeMakesAgainWhatIsDeletedAndWritesNothingInSteadyState(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	applySample(t, ns, "kre_v1alpha1_runtime.yaml")
	statefulSetsOf(t, ns)

	// A placement reaches the component's pods (and, unchanged, writes nothing after).
	placement := v1alpha1.Placement{NodeSelector: map[string]string{"example.com/pool": "messaging"},
		Tolerations: []corev1.Toleration{{Key: "example.com/pool", Operator: corev1.TolerationOpEqual, Value: "messaging", Effect: corev1.TaintEffectNoSchedule}}}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"nats_streaming": map[string]any{"placement": placement}}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Patch(ctx, &v1alpha1.Runtime{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "example4"}},
		client.RawPatch("application/merge-patch+json", patch))).To(Succeed())
	var sets map[string]*appsv1.StatefulSet
	g.Eventually(func(g Gomega) {
		sets = statefulSetsOf(t, ns)
		g.Expect(sets["kre-nats"].Spec.Template.Spec.NodeSelector).To(Equal(placement.NodeSelector))
		g.Expect(sets["kre-nats"].Spec.Template.Spec.Tolerations).To(Equal(placement.Tolerations))
	}, timeout, tick).Should(Succeed())
	g.Expect(sets["kre-mongo"].Spec.Template.Spec.NodeSelector).To(BeEmpty(), "placement is per component")
	// What a pass wrote is one Normal Event per reason on the Runtime: the first pass made
	// every server object; the placement updated the StatefulSet.
	rt := &v1alpha1.Runtime{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "example4"}}
	recorded := func() (int, int) {
		return events.Emitted(rt, ensure.EventCreated), events.Emitted(rt, ensure.EventUpdated)
	}
	g.Expect(events.Notes(rt, ensure.EventCreated)).To(HaveExactElements(And(HavePrefix("Created Secret kre-mongo-credentials, Service kre-mongo-headless, "),
		ContainSubstring(", StatefulSet kre-mongo, "), ContainSubstring(", StatefulSet kre-nats, "), HaveSuffix(", StatefulSet kre-minio"))))
	// The pass's Updated Event is recorded when it ends, after its write.
	g.Eventually(func() []string { return events.Notes(rt, ensure.EventUpdated) }, timeout, tick).Should(ContainElement("Updated StatefulSet kre-nats"))
	created, updated := recorded()

	// The manager's cache holds no pod template; a change by hand of one is still put back.
	cached := &appsv1.StatefulSet{}
	g.Expect(writes.Get(ctx, client.ObjectKeyFromObject(sets["kre-nats"]), cached)).To(Succeed())
	g.Expect(cached.Spec.Template.Spec.Containers).To(BeEmpty())
	image := sets["kre-nats"].Spec.Template.Spec.Containers[0].Image
	byHand := sets["kre-nats"].DeepCopy()
	byHand.Spec.Template.Spec.Containers[0].Image = "example.com/by-hand:1"
	g.Expect(env.Client.Update(ctx, byHand)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(statefulSetsOf(t, ns)["kre-nats"].Spec.Template.Spec.Containers[0].Image).To(Equal(image))
	}, timeout, tick).Should(Succeed())
	// It holds Services and Secrets as metadata alone; a change by hand of one is put back too.
	service := &corev1.Service{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kre-nats"}, service)).To(Succeed())
	port := service.Spec.Ports[0].Port
	service.Spec.Ports[0].Port = port + 1
	g.Expect(env.Client.Update(ctx, service)).To(Succeed())
	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kre-mongo-credentials"}, secret)).To(Succeed())
	password := string(secret.Data["password"])
	secret.Data["password"] = []byte("by-hand")
	g.Expect(env.Client.Update(ctx, secret)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(service), service)).To(Succeed())
		g.Expect(service.Spec.Ports[0].Port).To(Equal(port))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
		g.Expect(string(secret.Data["password"])).To(Equal(password), "the spec's inline credentials")
	}, timeout, tick).Should(Succeed())

	markReady(g, ns)
	g.Eventually(func(g Gomega) {
		g.Expect(conditions.IsTrue(getRuntime(g, ns, "example4"), conditions.ReadyCondition)).To(BeTrue())
	}, timeout, tick).Should(Succeed())

	// Steady state: passes that change nothing write nothing and log nothing.
	time.Sleep(time.Second)
	before, mark := writes.WritesIn(ns), logs.Len()
	for range 5 {
		poke(g, ns, "example4")
	}
	time.Sleep(2 * time.Second)
	g.Expect(writes.WritesIn(ns) - before).To(BeZero())
	g.Expect(logs.Since(mark, ns)).To(BeEmpty())
	created, updated = recorded()
	g.Consistently(func() int { c, u := recorded(); return c + u - created - updated }, time.Second, tick).Should(BeZero(), "no Event without a write")

	// Deleted children come back.
	g.Expect(env.Client.Delete(ctx, sets["kre-nats"])).To(Succeed())
	g.Expect(env.Client.Delete(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kre-mongo"}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		s := &appsv1.StatefulSet{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(sets["kre-nats"]), s)).To(Succeed())
		g.Expect(s.UID).NotTo(Equal(sets["kre-nats"].UID))
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kre-mongo"}, &corev1.Service{})).To(Succeed())
		again := strings.Join(events.Notes(rt, ensure.EventCreated)[created:], ", ")
		g.Expect(again).To(And(ContainSubstring("StatefulSet kre-nats"), MatchRegexp(`Service kre-mongo(,|$)`)))
	}, timeout, tick).Should(Succeed())
}

// In a namespace being deleted the API server refuses every create: a pass stops at the
// first refusal, rather than trying each of its servers (and the Ingress) in turn, and it is
// not retried. While 1000 Runtimes' namespaces were deleted, their passes tried 16,002 creates.
func TestARuntimeInANamespaceBeingDeletedTriesOneCreateAPass(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	applySample(t, ns, "kre_v1alpha1_runtime.yaml")
	sets := statefulSetsOf(t, ns)
	// envtest runs no namespace controller: the namespace stays Terminating.
	g.Expect(env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	passes, err := testenv.Reconciles("runtime")
	g.Expect(err).NotTo(HaveOccurred())
	creates := writes.Creates(ns)
	for _, set := range sets { // each component's, so that every component has one to make
		g.Expect(env.Client.Delete(ctx, set)).To(Succeed())
	}
	g.Eventually(func() int { return writes.Creates(ns) }, timeout, tick).Should(BeNumerically(">", creates))
	tried, err := writes.CreatesOnceStill(ns, timeout)
	g.Expect(err).NotTo(HaveOccurred())
	after, err := testenv.Reconciles("runtime")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tried-creates).To(BeNumerically("<=", int(after-passes)), "creates tried, at most one a pass")
}

func TestARuntimeRefusesAnObjectItDoesNotOwn(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	theirs := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "kre-nats", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 1}}}}
	g.Expect(env.Client.Create(ctx, theirs)).To(Succeed())
	applySample(t, ns, "kre_v1alpha1_runtime.yaml")
	g.Eventually(func(g Gomega) {
		degraded := conditions.Get(getRuntime(g, ns, "example4"), conditions.DegradedCondition)
		g.Expect(degraded).NotTo(BeNil())
		g.Expect(degraded.Reason).To(Equal(conditions.ReasonObjectNotOwned))
		g.Expect(degraded.Message).To(Equal("Service kre-nats already exists and is controlled by no Runtime: the operator neither adopts nor overwrites it; delete or rename it"))
	}, timeout, tick).Should(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(theirs), theirs)).To(Succeed())
	g.Expect(theirs.OwnerReferences).To(BeEmpty())
	// MongoDB and MinIO are made all the same.
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kre-mongo"}, &appsv1.StatefulSet{})).To(Succeed())
}

// Runtimes created at once in one namespace: the first to make a server object gets all of
// them (their names are fixed), and the others make none, saying whose they are. Before, the
// passes raced object by object, and the servers could end up split so that none was Ready.
func TestRuntimesCreatedAtOnceInANamespaceNeverSplitItsServers(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespaces := make([]string, 5)
	for i := range namespaces {
		namespaces[i] = newNamespace(t)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 3*len(namespaces))
	for _, ns := range namespaces {
		for i := range 3 {
			wg.Go(func() {
				errs <- env.Client.Create(ctx, &v1alpha1.Runtime{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("rt-%d", i), Namespace: ns}})
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		g.Expect(err).NotTo(HaveOccurred())
	}
	for _, ns := range namespaces {
		sets := statefulSetsOf(t, ns)
		owner := metav1.GetControllerOf(sets["kre-mongo"])
		g.Expect(owner).NotTo(BeNil())
		g.Eventually(func(g Gomega) {
			services := &corev1.ServiceList{}
			g.Expect(env.Client.List(ctx, services, client.InNamespace(ns))).To(Succeed())
			g.Expect(services.Items).NotTo(BeEmpty())
			for _, o := range services.Items {
				g.Expect(metav1.GetControllerOf(&o)).To(HaveField("UID", owner.UID), "Service %s in %s", o.Name, ns)
			}
			for name, o := range sets {
				g.Expect(metav1.GetControllerOf(o)).To(HaveField("UID", owner.UID), "StatefulSet %s in %s", name, ns)
			}
			for i := range 3 {
				rt := getRuntime(g, ns, fmt.Sprintf("rt-%d", i))
				if rt.Name == owner.Name {
					continue
				}
				degraded := conditions.Get(rt, conditions.DegradedCondition)
				g.Expect(degraded).NotTo(BeNil())
				g.Expect(degraded.Reason).To(Equal(conditions.ReasonObjectNotOwned))
				g.Expect(degraded.Message).To(ContainSubstring("it was made for Runtime " + owner.Name))
			}
		}, timeout, tick).Should(Succeed())
	}
}

func TestARuntimeRefusesASecretOfSomeoneElsesForItsGeneratedCredentials(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	// Unlabelled, so outside the manager's cache: only the API server knows it is there.
	theirs := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kre-mongo-credentials", Namespace: ns},
		Data: map[string][]byte{"username": []byte("someone"), "password": []byte("else")}}
	g.Expect(env.Client.Create(ctx, theirs)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &v1alpha1.Runtime{ObjectMeta: metav1.ObjectMeta{Name: "generated", Namespace: ns}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		degraded := conditions.Get(getRuntime(g, ns, "generated"), conditions.DegradedCondition)
		g.Expect(degraded).NotTo(BeNil())
		g.Expect(degraded.Reason).To(Equal(conditions.ReasonObjectNotOwned))
		g.Expect(degraded.Message).To(HavePrefix("Secret kre-mongo-credentials already exists and is controlled by no Runtime"))
	}, timeout, tick).Should(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(theirs), theirs)).To(Succeed())
	g.Expect(theirs.Data).To(HaveKeyWithValue("password", []byte("else")), "left as it was")
}

func TestARuntimeRoutesItsIngressToTheStartedVersion(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	applySample(t, ns, "kre_v1alpha1_runtime.yaml")
	statefulSetsOf(t, ns)
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: IngressName}, &networkingv1.Ingress{})).NotTo(Succeed(),
		"no Ingress without a started version")

	version := applySample(t, ns, "kre_v1alpha1_runtimeversion.yaml")
	ing := &networkingv1.Ingress{}
	g.Eventually(func() error { return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: IngressName}, ing) }, timeout, tick).Should(Succeed())
	g.Expect(ing.Spec.Rules[0].Host).To(Equal("runtime.local"))
	g.Expect(ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name).To(Equal("greeter-v1-entrypoint"))
	g.Eventually(func(g Gomega) {
		g.Expect(getRuntime(g, ns, "example4").Status.EntrypointVersion).To(Equal("greeter-v1"))
	}, timeout, tick).Should(Succeed())

	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"state":"Stopped"}}`))
	g.Expect(env.Client.Patch(ctx, version, patch)).To(Succeed())
	g.Eventually(func() error { return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: IngressName}, ing) }, timeout, tick).ShouldNot(Succeed())
}

func TestAnEntrypointOutsideThePolicyIsNotPublished(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	applySample(t, ns, "kre_v1alpha1_runtime.yaml")
	applySample(t, ns, "kre_v1alpha1_runtimeversion.yaml")
	key := client.ObjectKey{Namespace: ns, Name: IngressName}
	g.Eventually(func() error { return env.Client.Get(ctx, key, &networkingv1.Ingress{}) }, timeout, tick).Should(Succeed())

	rt := getRuntime(g, ns, "example4")
	patch := client.RawPatch("application/merge-patch+json",
		[]byte(`{"spec":{"entrypoint":{"host":"shop.other-team.apps.test","ingressClassName":"private"}}}`))
	g.Expect(env.Client.Patch(ctx, rt, patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		rt := getRuntime(g, ns, "example4")
		degraded := conditions.Get(rt, conditions.DegradedCondition)
		g.Expect(degraded).NotTo(BeNil())
		g.Expect(degraded.Reason).To(Equal(v1alpha1.ReasonEntrypointNotAllowed))
		g.Expect(degraded.Message).To(And(ContainSubstring(`"shop.other-team.apps.test"`), ContainSubstring("*."+ns+".apps.test"),
			ContainSubstring(`ingressClassName "private"`)))
		g.Expect(degraded.ObservedGeneration).To(Equal(rt.Generation))
		g.Expect(rt.Status.EntrypointVersion).To(BeEmpty())
		g.Expect(env.Client.Get(ctx, key, &networkingv1.Ingress{})).NotTo(Succeed(), "the Ingress of a refused entrypoint is deleted")
	}, timeout, tick).Should(Succeed())
	g.Eventually(func() int { return events.Emitted(rt, v1alpha1.ReasonEntrypointNotAllowed) }, timeout, tick).Should(BeNumerically(">=", 1))

	patch = client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"entrypoint":{"host":"shop.`+ns+`.apps.test","ingressClassName":"public"}}}`))
	g.Expect(env.Client.Patch(ctx, rt, patch)).To(Succeed())
	ing := &networkingv1.Ingress{}
	g.Eventually(func() error { return env.Client.Get(ctx, key, ing) }, timeout, tick).Should(Succeed())
	g.Expect(ing.Spec.Rules[0].Host).To(Equal("shop." + ns + ".apps.test"))
}

func TestRuntimeAdmissionRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	tests := []struct {
		name string
		spec map[string]any
		want string
	}{
		{"two mongo replicas", map[string]any{"mongo": map[string]any{"replicas": 2}}, "mongo.replicas must be 1: MongoDB replica sets are not supported yet"},
		{"negative NATS replicas", map[string]any{"nats_streaming": map[string]any{"replicas": -1}}, "spec.nats_streaming.replicas: Invalid value: -1"},
		{"secretRef and inline", map[string]any{"mongo": map[string]any{"credentials": map[string]any{
			"username": "a", "password": "b", "secretRef": map[string]any{"name": "s"}}}}, "set either secretRef or username and password, not both"},
		{"a user without a password", map[string]any{"mongo": map[string]any{"credentials": map[string]any{"username": "a"}}}, "username and password go together"},
		{"a short MinIO secret key", map[string]any{"minio": map[string]any{"credentials": map[string]any{"accessKey": "admin", "secretKey": "short"}}},
			"spec.minio.credentials.secretKey: Invalid value"},
		{"a zero volume", map[string]any{"minio": map[string]any{"storage": map[string]any{"size": "0"}}}, "size must be at least 256Mi"},
		{"a volume too small for its server", map[string]any{"mongo": map[string]any{"storage": map[string]any{"size": "100Mi"}}},
			"size must be at least 256Mi: a smaller volume fills before its server serves"},
		{"a bucket name S3 refuses", map[string]any{"minio": map[string]any{"bucket": "Results_2024"}}, "spec.minio.bucket: Invalid value"},
		{"an unknown field", map[string]any{"influxdb": map[string]any{}}, `unknown field "spec.influxdb"`},
		{"an unknown retention", map[string]any{"volumeRetention": "Sometimes"}, `Unsupported value: "Sometimes"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": v1alpha1.GroupVersion.String(), "kind": "Runtime",
				"metadata": map[string]any{"generateName": "bad-", "namespace": ns}, "spec": tt.spec,
			}}
			err := env.Client.Create(ctx, u, client.FieldValidation(metav1.FieldValidationStrict))
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tt.want)))
		})
	}
}

func TestRuntimeAdmissionRefusesAStorageChange(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	applySample(t, ns, "kre_v1alpha1_runtime.yaml")
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"mongo":{"storage":{"size":"5Gi"}}}}`))
	err := env.Client.Patch(context.Background(), &v1alpha1.Runtime{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "example4"}}, patch)
	g.Expect(err).To(MatchError(ContainSubstring("spec.mongo.storage: Invalid value")))
	g.Expect(strings.Contains(err.Error(), "storage cannot change after creation")).To(BeTrue(), err.Error())
}
