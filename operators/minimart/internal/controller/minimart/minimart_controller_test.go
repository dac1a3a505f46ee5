package minimart

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"helm.sh/helm/v3/pkg/release"
	helmtime "helm.sh/helm/v3/pkg/time"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/operators/minimart/api/v1alpha1"
	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/testenv"
)

const (
	timeout = 30 * time.Second
	tick    = 100 * time.Millisecond
)

func newNamespace(t *testing.T) string { return env.NewNamespace(t, "minimart-test") }

// create makes a Minimart of one product in ns, changed by edit.
func create(t *testing.T, ns, name string, edit func(*v1alpha1.Minimart)) *v1alpha1.Minimart {
	t.Helper()
	m := &v1alpha1.Minimart{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	m.Spec.StoreName = "Corner shop"
	m.Spec.Products = []v1alpha1.Product{{Name: "apples", Price: "3.50"}}
	if edit != nil {
		edit(m)
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), m)).To(Succeed())
	return m
}

func get(g Gomega, ns, name string) *v1alpha1.Minimart {
	m := &v1alpha1.Minimart{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, m)).To(Succeed())
	return m
}

// update applies edit to the Minimart's spec.
func update(t *testing.T, ns, name string, edit func(*v1alpha1.Minimart)) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		m := get(g, ns, name)
		edit(m)
		g.Expect(env.Client.Update(context.Background(), m)).To(Succeed())
	}, timeout, tick).Should(Succeed())
}

// history is the release's revisions, as `helm history` lists them.
func history(g Gomega, ns, name string) []*release.Release {
	revisions, err := reconciler.Releases.History(ns, name)
	g.Expect(err).NotTo(HaveOccurred())
	return revisions
}

// markAvailable does what the Deployment controller and kubelets would: report every
// replica of the release's Deployment updated and available. envtest runs neither.
func markAvailable(g Gomega, ns, name string) {
	d := &appsv1.Deployment{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
	n := ptr.Deref(d.Spec.Replicas, 1)
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
	g.Expect(env.Client.Status().Update(context.Background(), d)).To(Succeed())
}

// waitReady waits until the Minimart is Ready at its generation, marking its Deployment
// available on the way.
func waitReady(t *testing.T, ns, name string) *v1alpha1.Minimart {
	t.Helper()
	var m *v1alpha1.Minimart
	NewWithT(t).Eventually(func(g Gomega) {
		markAvailable(g, ns, name)
		m = get(g, ns, name)
		ready := conditions.Get(m, conditions.ReadyCondition)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), ready.Message)
		g.Expect(ready.ObservedGeneration).To(Equal(m.Generation))
	}, timeout, tick).Should(Succeed())
	return m
}

func TestAMinimartIsAHelmReleaseReadyWhenItsDeploymentIsAvailable(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	create(t, ns, "shop", nil)

	g.Eventually(func(g Gomega) {
		m := get(g, ns, "shop")
		ready := conditions.Get(m, conditions.ReadyCondition)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Reason).To(BeElementOf(v1alpha1.ReasonReleaseDeployed, v1alpha1.ReasonDeploymentNotAvailable))
		g.Expect(m.Status.DeployedRelease).To(Equal(&v1alpha1.DeployedRelease{Name: "shop", Revision: 1, ChartVersion: "0.1.0"}))
		g.Expect(m.Finalizers).To(ContainElement(v1alpha1.Finalizer))
	}, timeout, tick).Should(Succeed())

	// Helm's storage has the release, with the spec as its values.
	revisions := history(g, ns, "shop")
	g.Expect(revisions).To(HaveLen(1))
	g.Expect(revisions[0].Info.Status).To(Equal(release.StatusDeployed))
	g.Expect(revisions[0].Config).To(HaveKeyWithValue("storeName", "Corner shop"))
	g.Expect(revisions[0].Config).To(HaveKeyWithValue("replicaCount", BeNumerically("==", 1)))
	secrets := &corev1.SecretList{}
	g.Expect(env.Client.List(ctx, secrets, client.InNamespace(ns), client.MatchingLabels{"owner": "helm", "name": "shop"})).To(Succeed())
	g.Expect(secrets.Items).To(HaveLen(1))
	g.Expect(secrets.Items[0].Type).To(Equal(corev1.SecretType("helm.sh/release.v1")))

	// The chart's objects are controlled by the Minimart and labelled for it.
	m := get(g, ns, "shop")
	d, svc, np := &appsv1.Deployment{}, &corev1.Service{}, &networkingv1.NetworkPolicy{}
	for _, obj := range []client.Object{d, svc, np} {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop"}, obj)).To(Succeed())
	}
	for _, obj := range []client.Object{d, svc, np} {
		g.Expect(metav1.IsControlledBy(obj, m)).To(BeTrue(), obj.GetName())
		g.Expect(obj.GetLabels()).To(HaveKeyWithValue(v1alpha1.MinimartLabel, "shop"))
		g.Expect(obj.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "Helm"))
	}
	g.Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeNodePort))
	g.Expect(svc.Spec.Ports[0].Port).To(Equal(int32(80)))
	g.Expect(d.Spec.Template.Spec.Containers[0].Env).To(ContainElement(corev1.EnvVar{Name: "PRODUCTS", Value: `[{"name":"apples","price":"3.50"}]`}))
	// The NetworkPolicy selects the store's pods and lets in only their http port.
	g.Expect(np.Spec.PodSelector.MatchLabels).To(Equal(d.Spec.Selector.MatchLabels))
	g.Expect(np.Spec.PolicyTypes).To(ConsistOf(networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress))
	g.Expect(np.Spec.Egress).To(BeEmpty())
	g.Expect(np.Spec.Ingress).To(HaveLen(1))
	g.Expect(np.Spec.Ingress[0].From).To(BeEmpty())
	g.Expect(np.Spec.Ingress[0].Ports).To(HaveLen(1))
	g.Expect(np.Spec.Ingress[0].Ports[0].Port.String()).To(Equal("http"))
	g.Expect(*np.Spec.Ingress[0].Ports[0].Protocol).To(Equal(corev1.ProtocolTCP))

	// Ready once the Deployment is available.
	m = waitReady(t, ns, "shop")
	g.Expect(m.Status.ReadyReplicas).To(Equal(int32(1)))
	g.Expect(conditions.Get(m, conditions.ProgressingCondition).Status).To(Equal(metav1.ConditionFalse))
	g.Expect(conditions.Get(m, conditions.DegradedCondition).Status).To(Equal(metav1.ConditionFalse))
	g.Expect(m.Status.ObservedGeneration).To(Equal(m.Generation))
	g.Expect(events.Emitted(m, "Installed")).To(Equal(1))
}

// reconciles is how many passes of the controller have ended, as its metrics count them.
func reconciles(g Gomega) float64 {
	n, err := testenv.Reconciles("minimart")
	g.Expect(err).NotTo(HaveOccurred())
	return n
}

func TestASteadyReleaseCostsNoWritesAndNoRevisions(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	create(t, ns, "steady", nil)
	waitReady(t, ns, "steady")
	// Let the passes the last status write caused end.
	time.Sleep(time.Second)
	clientWrites, helm, passes := writes.WritesIn(ns), helmWrites.Load(), reconciles(g)

	// Wake the controller a few times with changes that are not drift: a label on the
	// Deployment (an annotation would make a new generation, which envtest's missing
	// Deployment controller would never observe), a label on the Minimart (no new
	// generation: not even a pass).
	for i := range 3 {
		d := &appsv1.Deployment{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "steady"}, d)).To(Succeed())
		metav1.SetMetaDataLabel(&d.ObjectMeta, "example.com/touched", fmt.Sprint(i))
		g.Expect(env.Client.Update(ctx, d)).To(Succeed())
	}
	update(t, ns, "steady", func(m *v1alpha1.Minimart) { m.Labels = map[string]string{"example.com/team": "shop"} })

	g.Eventually(func() float64 { return reconciles(g) }, timeout, tick).Should(BeNumerically(">=", passes+3))
	time.Sleep(2 * time.Second)
	g.Expect(writes.WritesIn(ns)).To(Equal(clientWrites), "the manager's client wrote")
	g.Expect(helmWrites.Load()).To(Equal(helm), "Helm wrote")
	g.Expect(history(g, ns, "steady")).To(HaveLen(1))
}

func TestEachSpecChangeIsOneRevisionAndHistoryIsCapped(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	create(t, ns, "growing", nil)
	waitReady(t, ns, "growing")

	for i := 2; i <= testMaxHistory+2; i++ {
		update(t, ns, "growing", func(m *v1alpha1.Minimart) { m.Spec.StoreName = fmt.Sprintf("Shop %d", i) })
		g.Eventually(func(g Gomega) {
			m := waitReady(t, ns, "growing")
			g.Expect(m.Status.DeployedRelease.Revision).To(Equal(i))
		}, timeout, tick).Should(Succeed())
	}
	revisions := history(g, ns, "growing")
	g.Expect(revisions).To(HaveLen(testMaxHistory), "--max-history")
	last := revisions[len(revisions)-1]
	g.Expect(last.Version).To(Equal(testMaxHistory + 2))
	g.Expect(last.Config).To(HaveKeyWithValue("storeName", fmt.Sprintf("Shop %d", testMaxHistory+2)))
	d := &appsv1.Deployment{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "growing"}, d)).To(Succeed())
	g.Expect(d.Spec.Template.Spec.Containers[0].Env).To(ContainElement(corev1.EnvVar{Name: "STORE_NAME", Value: fmt.Sprintf("Shop %d", testMaxHistory+2)}))
	g.Expect(events.Emitted(get(g, ns, "growing"), "Upgraded")).To(Equal(testMaxHistory + 1))
}

func TestADeletedOrEditedObjectIsRestoredWithoutARevision(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	create(t, ns, "drift", func(m *v1alpha1.Minimart) { m.Spec.ReplicaCount = ptr.To[int32](2) })
	waitReady(t, ns, "drift")

	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "drift"}}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
	oldUID := svc.UID
	g.Expect(env.Client.Delete(ctx, svc)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
		g.Expect(svc.UID).NotTo(Equal(oldUID))
	}, timeout, tick).Should(Succeed())

	d := &appsv1.Deployment{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "drift"}, d)).To(Succeed())
	d.Spec.Replicas = ptr.To[int32](5)
	g.Expect(env.Client.Update(ctx, d)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
		g.Expect(*d.Spec.Replicas).To(Equal(int32(2)))
	}, timeout, tick).Should(Succeed())

	np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "drift"}}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(np), np)).To(Succeed())
	oldUID = np.UID
	g.Expect(env.Client.Delete(ctx, np)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(np), np)).To(Succeed())
		g.Expect(np.UID).NotTo(Equal(oldUID))
	}, timeout, tick).Should(Succeed())

	// A port opened by hand is closed again.
	np.Spec.Ingress[0].Ports = append(np.Spec.Ingress[0].Ports, networkingv1.NetworkPolicyPort{Port: ptr.To(intstr.FromInt32(22))})
	g.Expect(env.Client.Update(ctx, np)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(np), np)).To(Succeed())
		g.Expect(np.Spec.Ingress[0].Ports).To(HaveLen(1))
	}, timeout, tick).Should(Succeed())

	g.Expect(history(g, ns, "drift")).To(HaveLen(1), "restoring made a revision")
	g.Expect(events.Emitted(get(g, ns, "drift"), v1alpha1.ReasonDriftRestored)).To(BeNumerically(">=", 4))
	waitReady(t, ns, "drift")
}

func TestAFailedReleaseSaysWhyBacksOffAndRecoversWhenTheSpecIsFixed(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	create(t, ns, "first", func(m *v1alpha1.Minimart) { m.Spec.Service.NodePort = ptr.To[int32](31234) })
	waitReady(t, ns, "first")
	create(t, ns, "second", func(m *v1alpha1.Minimart) { m.Spec.Service.NodePort = ptr.To[int32](31234) })

	g.Eventually(func(g Gomega) {
		m := get(g, ns, "second")
		for _, c := range []string{conditions.ReadyCondition, conditions.DegradedCondition} {
			cond := conditions.Get(m, c)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Reason).To(Equal(v1alpha1.ReasonReleaseFailed))
			g.Expect(cond.Message).To(ContainSubstring("provided port is already allocated"))
		}
		g.Expect(conditions.Get(m, conditions.ReadyCondition).Status).To(Equal(metav1.ConditionFalse))
	}, timeout, tick).Should(Succeed())
	g.Expect(events.Emitted(get(g, ns, "second"), v1alpha1.ReasonReleaseFailed)).To(Equal(1))

	// Backing off: no second try within the first retry's delay, though the failed
	// install's Deployment wakes the controller.
	g.Consistently(func(g Gomega) {
		revisions := history(g, ns, "second")
		g.Expect(revisions).To(HaveLen(1))
		g.Expect(revisions[0].Info.Status).To(Equal(release.StatusFailed))
	}, firstRetry/2, 500*time.Millisecond).Should(Succeed())

	update(t, ns, "second", func(m *v1alpha1.Minimart) { m.Spec.Service.NodePort = ptr.To[int32](31235) })
	m := waitReady(t, ns, "second")
	g.Expect(m.Status.DeployedRelease.Revision).To(Equal(2))
	g.Expect(conditions.Get(m, conditions.DegradedCondition).Status).To(Equal(metav1.ConditionFalse))
	g.Expect(history(g, ns, "first")).To(HaveLen(1), "no rollback or retry touched the healthy release")
}

// addPending stores what an upgrade leaves while under way: a newest revision
// pending-upgrade, made at, from the deployed revision's values with storeName.
func addPending(g Gomega, ns, name, storeName string, at time.Time) {
	revisions := history(g, ns, name)
	pending := *revisions[len(revisions)-1]
	pending.Version++
	pending.Config = map[string]any{"storeName": storeName}
	pending.Info = &release.Info{Status: release.StatusPendingUpgrade, Description: "Preparing upgrade",
		FirstDeployed: pending.Info.FirstDeployed, LastDeployed: helmtime.Time{Time: at}}
	cfg, err := reconciler.Releases.ActionConfig(ns)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Releases.Create(&pending)).To(Succeed())
}

func TestAReleaseLeftPendingByAnInterruptedUpgradeIsRecovered(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	create(t, ns, "cut", nil)
	waitReady(t, ns, "cut")

	// What a manager killed mid-upgrade leaves: a newest revision pending-upgrade, from
	// before this manager began to lead. Helm would refuse every upgrade ("another operation
	// (install/upgrade/rollback) is in progress").
	addPending(g, ns, "cut", "Before the cut", reconciler.leadingSince().Add(-time.Second))

	update(t, ns, "cut", func(m *v1alpha1.Minimart) { m.Spec.StoreName = "After the cut" })
	g.Eventually(func(g Gomega) {
		m := waitReady(t, ns, "cut")
		g.Expect(m.Status.DeployedRelease.Revision).To(Equal(3))
	}, timeout, tick).Should(Succeed())
	revisions := history(g, ns, "cut")
	g.Expect(revisions[1].Info.Status).To(Equal(release.StatusFailed))
	g.Expect(revisions[1].Info.Description).To(ContainSubstring("interrupted"))
	g.Expect(revisions[2].Config).To(HaveKeyWithValue("storeName", "After the cut"))
	g.Expect(events.Emitted(get(g, ns, "cut"), v1alpha1.ReasonReleaseRecovered)).To(Equal(1))
}

func TestAnotherClientsOperationIsWaitedFor(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	create(t, ns, "shared", nil)
	waitReady(t, ns, "shared")

	// helm upgrade by hand, under way: a pending revision made while this manager runs.
	addPending(g, ns, "shared", "By hand", time.Now())
	update(t, ns, "shared", func(m *v1alpha1.Minimart) { m.Spec.StoreName = "By the operator" })
	g.Eventually(func(g Gomega) {
		ready := conditions.Get(get(g, ns, "shared"), conditions.ReadyCondition)
		g.Expect(ready.Reason).To(Equal(v1alpha1.ReasonOtherOperation))
		g.Expect(ready.Message).To(ContainSubstring("revision 2 is pending-upgrade by another client"))
	}, timeout, tick).Should(Succeed())
	g.Consistently(func(g Gomega) {
		revisions := history(g, ns, "shared")
		g.Expect(revisions).To(HaveLen(2))
		g.Expect(revisions[1].Info.Status).To(Equal(release.StatusPendingUpgrade), "the other client's operation was left alone")
	}, 2*otherRecheck, 250*time.Millisecond).Should(Succeed())

	// The other client's upgrade ends: the operator brings the release back to the spec.
	revisions := history(g, ns, "shared")
	revisions[1].SetStatus(release.StatusDeployed, "Upgrade complete")
	cfg, err := reconciler.Releases.ActionConfig(ns)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Releases.Update(revisions[1])).To(Succeed())
	g.Eventually(func(g Gomega) {
		m := waitReady(t, ns, "shared")
		g.Expect(m.Status.DeployedRelease.Revision).To(Equal(3))
	}, timeout, tick).Should(Succeed())
	g.Expect(history(g, ns, "shared")[2].Config).To(HaveKeyWithValue("storeName", "By the operator"))
}

func TestAReleaseUninstalledByHandIsInstalledAgain(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	create(t, ns, "again", nil)
	waitReady(t, ns, "again")

	// What helm uninstall does, with Helm's own action.
	g.Expect(reconciler.Releases.Uninstall(ns, "again")).To(Succeed())
	g.Eventually(func(g Gomega) {
		revisions := history(g, ns, "again")
		g.Expect(revisions).To(HaveLen(1))
		g.Expect(revisions[0].Info.Status).To(Equal(release.StatusDeployed))
		g.Expect(revisions[0].Info.Description).To(Equal("Install complete"))
	}, timeout, tick).Should(Succeed())
	waitReady(t, ns, "again")
	g.Expect(events.Emitted(get(g, ns, "again"), v1alpha1.EventInstalled)).To(Equal(2))
}

func TestDeletingAMinimartUninstallsItsRelease(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	m := create(t, ns, "gone", nil)
	waitReady(t, ns, "gone")

	g.Expect(env.Client.Delete(ctx, m)).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(m), &v1alpha1.Minimart{})
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		g.Expect(err).To(HaveOccurred())
	}, timeout, tick).Should(Succeed())
	g.Expect(history(g, ns, "gone")).To(BeEmpty())
	secrets := &corev1.SecretList{}
	g.Expect(env.Client.List(ctx, secrets, client.InNamespace(ns), client.MatchingLabels{"owner": "helm"})).To(Succeed())
	g.Expect(secrets.Items).To(BeEmpty())
	// Helm deleted the chart's objects (envtest runs no garbage collector).
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gone"}, &corev1.Service{})).NotTo(Succeed())
}

// What deleting a namespace does: its controller deletes what is in it kind by kind, the
// release's Secrets, Services and Deployments before the Minimarts, and the API server refuses
// new objects there meanwhile. envtest runs no namespace controller: the test deletes them.
func TestANamespaceBeingDeletedIsNotFoughtForItsRelease(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	m := create(t, ns, "leaving", nil)
	waitReady(t, ns, "leaving")

	g.Expect(env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	g.Expect(env.Client.Delete(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "leaving"}})).To(Succeed())
	terminating := func(g Gomega) {
		m := get(g, ns, "leaving")
		for _, c := range []string{conditions.ReadyCondition, conditions.ProgressingCondition, conditions.DegradedCondition} {
			cond := conditions.Get(m, c)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Reason).To(Equal(v1alpha1.ReasonNamespaceTerminating), "%s: %s", c, cond.Message)
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse), c)
			g.Expect(cond.Message).To(ContainSubstring("Namespace %s is being deleted", ns))
		}
	}
	g.Eventually(terminating, timeout, tick).Should(Succeed())
	// The restore the API server refused is not tried again: a retry with back-off from
	// 5 ms would pass about ten times in the next 3 s.
	passes := reconciles(g)
	time.Sleep(3 * time.Second)
	g.Expect(reconciles(g)).To(BeNumerically("<=", passes+1), "passes after the restore was refused")

	// With the revisions gone too, the release is not installed again.
	secrets := &corev1.SecretList{}
	g.Expect(env.Client.List(ctx, secrets, client.InNamespace(ns), client.MatchingLabels{"owner": "helm", "name": "leaving"})).To(Succeed())
	for i := range secrets.Items {
		g.Expect(env.Client.Delete(ctx, &secrets.Items[i])).To(Succeed())
	}
	passes = reconciles(g)
	g.Expect(env.Client.Delete(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "leaving"}})).To(Succeed())
	g.Eventually(func() float64 { return reconciles(g) }, timeout, tick).Should(BeNumerically(">", passes))
	g.Consistently(terminating, 2*time.Second, tick).Should(Succeed())
	g.Expect(history(g, ns, "leaving")).To(BeEmpty())
	g.Expect(value(g, "quintet_minimart_release_failures_total", m, "action", actionInstall)).To(BeZero())

	// Last, the namespace's deletion deletes the Minimart: it goes.
	g.Expect(env.Client.Delete(ctx, m)).To(Succeed())
	g.Eventually(func() error {
		return env.Client.Get(ctx, client.ObjectKeyFromObject(m), &v1alpha1.Minimart{})
	}, timeout, tick).Should(Satisfy(apierrors.IsNotFound))
}
