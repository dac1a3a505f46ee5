//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/e2e/robustness"
)

// runOLMScript runs hack/olm.sh (what make olm-up and run-bundle run) against the local cluster.
func runOLMScript(ctx context.Context, args ...string) {
	cmd := exec.CommandContext(ctx, filepath.Join("..", "hack", "olm.sh"), args...)
	cmd.Env = append(os.Environ(), "KUBECTL="+requiredEnv("E2E_KUBECTL"), "LOCALCLUSTER="+requiredEnv("E2E_LOCALCLUSTER"),
		"LOCAL="+requiredEnv("E2E_LOCAL_DIR"), "OLM_BIN="+requiredEnv("E2E_OLM_BIN"), "OPM="+requiredEnv("E2E_OPM"))
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
}

// operatorVersion is an operator's current version (operators/<name>/VERSION).
func operatorVersion(name string) string {
	data, err := os.ReadFile(filepath.Join(operatorDir(name), "VERSION"))
	Expect(err).NotTo(HaveOccurred())
	return strings.TrimSpace(string(data))
}

// serveSuccessorCatalog serves, as CatalogSource olm/<source>, a catalog of the operator's
// current bundle and a successor generated from the same config (version next, replacing the
// current one on channel stable), so that e2e has an upgrade whose old version is this code.
func serveSuccessorCatalog(ctx context.Context, operator, source, next string) (current, successor string) {
	version, pkg := operatorVersion(operator), "quintet-"+operator
	dir := GinkgoT().TempDir()
	templates, bundles := filepath.Join(dir, "templates"), filepath.Join(dir, "bundles", operator)
	Expect(os.MkdirAll(templates, 0o755)).To(Succeed())
	Expect(os.MkdirAll(bundles, 0o755)).To(Succeed())
	current, successor = pkg+".v"+version, pkg+".v"+next
	const imageRefTemplate = "registry.invalid/{{.Package}}-bundle:v{{.Version}}"
	template := fmt.Sprintf(`schema: olm.template.basic
entries:
- {schema: olm.package, name: %[1]s, defaultChannel: stable}
- {schema: olm.channel, package: %[1]s, name: stable, entries: [{name: %[2]s}, {name: %[3]s, replaces: %[2]s}]}
- {schema: olm.bundle, image: "registry.invalid/%[1]s-bundle:v%[4]s"}
- {schema: olm.bundle, image: "registry.invalid/%[1]s-bundle:v%[5]s"}
`, pkg, current, successor, version, next)
	Expect(os.WriteFile(filepath.Join(templates, pkg+".yaml"), []byte(template), 0o644)).To(Succeed())
	published, err := filepath.Abs(filepath.Join("..", "bundles", operator, version))
	Expect(err).NotTo(HaveOccurred())
	Expect(os.Symlink(published, filepath.Join(bundles, version))).To(Succeed())

	run := func(name string, args ...string) {
		out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
	}
	manager := requiredEnv("E2E_IMAGES") + "/" + operator + ":v" + version // the successor runs the same image
	run(requiredEnv("E2E_BUNDLE_TOOL"), "--config", filepath.Join(operatorDir(operator), "config", "manifests"), "--package", pkg,
		"--version", next, "--image", manager, "--release", filepath.Join(templates, pkg+".yaml"), "--out", filepath.Join(bundles, next))
	run(requiredEnv("E2E_CATALOG_TOOL"), "--opm", requiredEnv("E2E_OPM"), "--templates", templates, "--bundles", filepath.Join(dir, "bundles"),
		"--out", filepath.Join(dir, "catalog"), "--image-ref-template", imageRefTemplate, "--inline")
	// Below the ephemeral ports, which other specs' connections and free-port picks draw from.
	runOLMScript(ctx, "serve", source, filepath.Join(dir, "catalog"), "20053")
	return current, successor
}

// managerOnRealNode waits until the namespace's operator manager is one pod, ready on a real
// node (a rollout OLM or Helm started settles first), and returns it.
func managerOnRealNode(ctx context.Context, namespace string) corev1.Pod {
	var manager corev1.Pod
	Eventually(func(g Gomega) {
		pods := &corev1.PodList{}
		g.Expect(k8sClient.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(1), "one manager pod")
		manager = pods.Items[0]
		g.Expect(manager.Spec.NodeName).To(beARealNode())
		g.Expect(podReady(&manager)).To(BeTrue(), "manager %s is not ready", manager.Name)
	}).WithContext(ctx).Should(Succeed())
	return manager
}

// upgradeable returns the status and message of Upgradeable in an OperatorCondition's status,
// where OLM copies what the operator set.
func upgradeable(ctx context.Context, g Gomega, namespace, csvName string) (string, string) {
	cond := olmObject("operators.coreos.com/v2", "OperatorCondition", namespace, csvName, nil)
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(cond), cond)).To(Succeed())
	conds, _, _ := unstructured.NestedSlice(cond.Object, "status", "conditions")
	for _, c := range conds {
		if m := c.(map[string]any); m["type"] == "Upgradeable" {
			return m["status"].(string), fmt.Sprint(m["message"])
		}
	}
	return "", ""
}

// setUnschedulable cordons or uncordons every real node: with all of them cordoned, no new
// pod that must run on a real node can be scheduled.
func setUnschedulable(ctx context.Context, unschedulable bool) {
	patch := client.RawPatch("application/merge-patch+json", []byte(fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, unschedulable)))
	for _, name := range realNodeNames(ctx) {
		Expect(k8sClient.Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, patch)).To(Succeed(), name)
	}
}

var _ = Describe("Quintet through OLM on the real nodes", func() {
	BeforeEach(func(ctx SpecContext) { requireRealNode(ctx) })

	It("runs the manager OLM installed, placed by the Subscription's config, and it reconciles a sample", func(ctx SpecContext) {
		ns := createNamespace(ctx, "olm-gordon-real", nil)
		subscribe(ctx, ns, "quintet-gordon", map[string]any{"config": realNodePlacement()})
		csv := expectInstalled(ctx, ns, installedCSV(ctx, ns, "quintet-gordon"))
		manager := managerOnRealNode(ctx, ns)
		Expect(manager.Spec.Containers[0].Env).To(ContainElement(HaveField("Name", "OPERATOR_CONDITION_NAME")))
		By(csv.GetName() + " runs on " + manager.Spec.NodeName + "; a Gordon in its namespace gets its pods")
		gordon := applySample(ctx, "gordon", "operator_v1_gordon.yaml", ns)
		expectGordonRunning(ctx, gordon, 3)
		By("the manager applies its ServiceMonitor, PrometheusRule and dashboard, owned by its metrics Service, and Prometheus scrapes it")
		service := &corev1.Service{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gordon-controller-manager-metrics-service"}, service)).To(Succeed())
		for _, o := range []struct{ apiVersion, kind, name string }{
			{"monitoring.coreos.com/v1", "ServiceMonitor", "gordon-controller-manager-metrics-monitor"},
			{"monitoring.coreos.com/v1", "PrometheusRule", "gordon-alerts"},
			{"v1", "ConfigMap", "gordon-dashboard"},
		} {
			Eventually(func(g Gomega) {
				u := olmObject(o.apiVersion, o.kind, ns, o.name, nil)
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(u), u)).To(Succeed())
				g.Expect(u.GetOwnerReferences()).To(ConsistOf(HaveField("UID", service.UID)))
			}).WithContext(ctx).Should(Succeed(), "%s %s/%s", o.kind, ns, o.name)
		}
		expectScrapedUp(ctx, "gordon-operator", ns)
	})

	It("serves the catalog image as a CatalogSource on a real node, and unpacks bundle images with Jobs", func(ctx SpecContext) {
		// In the spec's namespace, the catalog serves its Subscriptions only: a catalog in OLM's
		// global namespace joins every resolution in the cluster, and fails them until it is up.
		const source = "quintet-image"
		// baseline, not restricted: the catalog pod and OLM's bundle unpack Jobs run here.
		ns := realNodeNamespaceAt(ctx, "olm-image", "baseline")
		catalog := olmObject("operators.coreos.com/v1alpha1", "CatalogSource", ns, source, map[string]any{
			"sourceType": "grpc", "image": requiredEnv("E2E_CATALOG_IMAGE"), "displayName": "Quintet (catalog image)",
			"grpcPodConfig": map[string]any{"securityContextConfig": "restricted"},
		})
		Expect(k8sClient.Create(ctx, catalog)).To(Succeed())
		Eventually(func(g Gomega) {
			state, _, _ := unstructured.NestedString(getOLM(ctx, g, "CatalogSource", ns, source).Object,
				"status", "connectionState", "lastObservedState")
			g.Expect(state).To(Equal("READY"))
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		pods := &corev1.PodList{}
		Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"olm.catalogSource": source})).To(Succeed())
		Expect(pods.Items).NotTo(BeEmpty())
		Expect(pods.Items[0].Spec.NodeName).To(beARealNode())

		subscribe(ctx, ns, "quintet-etcd-cluster", map[string]any{"source": source, "sourceNamespace": ns})
		csv := expectInstalled(ctx, ns, installedCSV(ctx, ns, "quintet-etcd-cluster"))
		By(csv.GetName() + " installed from the bundle image an unpack Job pulled from the registry")
		jobs := &batchv1.JobList{}
		Expect(k8sClient.List(ctx, jobs, client.InNamespace(ns), client.HasLabels{"operatorframework.io/bundle-unpack-ref"})).To(Succeed())
		Expect(jobs.Items).To(ContainElement(SatisfyAll(
			HaveField("Status.Succeeded", BeNumerically(">=", 1)),
			HaveField("Spec.Template.Spec.InitContainers", ContainElement(HaveField("Image", ContainSubstring("quintet-etcd-cluster-bundle")))),
		)))
	})

	// Serial: it cordons the real nodes, which every other real-node spec needs.
	It("holds an approved upgrade while Upgradeable is False, and upgrades once it is True", Serial, func(ctx SpecContext) {
		current, successor := serveSuccessorCatalog(ctx, "etcd-cluster", "etcd-successor", "9.9.9")
		ns := realNodeNamespace(ctx, "olm-etcd-hold")
		subscribe(ctx, ns, "quintet-etcd-cluster", map[string]any{
			"source": "etcd-successor", "installPlanApproval": "Manual", "startingCSV": current,
		})
		approve(ctx, ns, "quintet-etcd-cluster", current)
		expectInstalled(ctx, ns, current)
		Eventually(func(g Gomega) {
			status, _ := upgradeable(ctx, g, ns, current)
			g.Expect(status).To(Equal("True"), "with no etcd cluster, nothing holds an upgrade")
		}).WithContext(ctx).Should(Succeed())

		By("running a one-member cluster, then scaling it to 3 with the real nodes cordoned: a member change that waits")
		cluster := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "etcd.database.coreos.com/v1beta2", "kind": "EtcdCluster",
			"metadata": map[string]any{"name": "held", "namespace": ns},
			"spec":     map[string]any{"size": int64(1), "version": requiredEnv("E2E_ETCD_VERSION"), "repository": requiredEnv("E2E_IMAGES") + "/etcd"},
		}}
		Expect(k8sClient.Create(ctx, cluster)).To(Succeed())
		expectEtcdReady(ctx, cluster, 1, requiredEnv("E2E_ETCD_VERSION"))
		setUnschedulable(ctx, true)
		DeferCleanup(func(ctx SpecContext) { setUnschedulable(ctx, false) })
		scaleEtcd(ctx, cluster, 3)
		Eventually(func(g Gomega) {
			status, message := upgradeable(ctx, g, ns, current)
			g.Expect(status).To(Equal("False"))
			g.Expect(message).To(ContainSubstring(ns + "/held"))
		}).WithContext(ctx).Should(Succeed())

		By("approving the upgrade: OLM creates " + successor + " and holds it")
		approve(ctx, ns, "quintet-etcd-cluster", successor)
		held := func(g Gomega) {
			csv := getOLM(ctx, g, "ClusterServiceVersion", ns, successor)
			phase, _, _ := unstructured.NestedString(csv.Object, "status", "phase")
			reason, _, _ := unstructured.NestedString(csv.Object, "status", "reason")
			g.Expect(phase).To(Equal("Pending"))
			g.Expect(reason).To(Equal("OperatorConditionNotUpgradeable"))
		}
		Eventually(held).WithContext(ctx).Should(Succeed())
		Consistently(held).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())

		By("letting the member change finish: Upgradeable turns True and the upgrade proceeds")
		setUnschedulable(ctx, false)
		expectEtcdReady(ctx, cluster, 3, requiredEnv("E2E_ETCD_VERSION"))
		expectInstalled(ctx, ns, successor)
		expectCSVGone(ctx, ns, current)
		expectEtcdReady(ctx, cluster, 3, requiredEnv("E2E_ETCD_VERSION"))
	})

	// Serial: the previous release's CRD replaces the current one until the upgrade.
	It("upgrades etcd-cluster through OLM from the previous release, built from its own source, under traffic, one cluster steady and one mid-scale: linearizable, nothing lost, the steady one's members restarted only for a changed pod template, the scale finished", Serial, robustnessScenario, func(ctx SpecContext) {
		const pkg = "quintet-etcd-cluster"
		previousRelease, currentRelease := requiredEnv("E2E_ETCD_CLUSTER_PREVIOUS_RELEASE"), operatorVersion("etcd-cluster")
		previous, current := pkg+".v"+previousRelease, pkg+".v"+currentRelease
		version := requiredEnv("E2E_ETCD_VERSION")
		ns := realNodeNamespace(ctx, "olm-etcd-upgrade")
		subscribe(ctx, ns, pkg, map[string]any{"installPlanApproval": "Manual", "startingCSV": previous})
		approve(ctx, ns, pkg, previous)
		expectInstalled(ctx, ns, previous)
		Expect(managerOnRealNode(ctx, ns).Spec.Containers[0].Image).To(HaveSuffix(":v" + previousRelease))

		By("running two clusters of three members under " + previous)
		harnessCluster := func(name string) *unstructured.Unstructured {
			cluster := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "etcd.database.coreos.com/v1beta2", "kind": "EtcdCluster",
				"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{robustness.HarnessLabel: "true"}},
				"spec":     map[string]any{"size": int64(3), "version": version, "repository": requiredEnv("E2E_IMAGES") + "/etcd"},
			}}
			Expect(k8sClient.Create(ctx, cluster)).To(Succeed())
			return cluster
		}
		cluster, scaling := harnessCluster(robustness.NamePrefix+"-olm"), harnessCluster(robustness.NamePrefix+"-olm-scaling")
		before := expectEtcdReady(ctx, cluster, 3, version)
		scalingBefore := expectEtcdReady(ctx, scaling, 3, version)
		previousTemplate := etcdStatefulSet(ctx, Default, cluster).Spec.Template

		scenario := "operator-upgrade-olm-v" + previousRelease + "-to-v" + currentRelease
		traffic := startEtcdTraffic(ctx, cluster, scenario)
		scalingTraffic := startEtcdTraffic(ctx, scaling, scenario+"-mid-scale")
		By("scaling " + scaling.GetName() + " to 5, and approving the upgrade to " + current + " once " + previous + " added its first member")
		scaleEtcd(ctx, scaling, 5)
		etcdMemberCount(ctx, etcdTLSClient(ctx, scaling, nil), 4)
		approve(ctx, ns, pkg, current)
		expectInstalled(ctx, ns, current)
		AddReportEntry("members of the cluster scaling 3 → 5 when "+current+" was installed", len(getEtcdStatus(ctx, Default, scaling.DeepCopy()).Members))
		expectCSVGone(ctx, ns, previous)
		Expect(managerOnRealNode(ctx, ns).Spec.Containers[0].Image).To(HaveSuffix(":v" + currentRelease))
		By("changing the spec without changing the members (paused: false, the default), so that conditions for the new generation show a pass of the current manager")
		generation := cluster.GetGeneration()
		patchEtcdSpec(ctx, cluster, `{"spec":{"paused":false}}`)
		Expect(cluster.GetGeneration()).To(BeNumerically(">", generation))
		var after etcdStatus
		Eventually(func(g Gomega) {
			after = checkEtcdReady(ctx, g, cluster, 3, version)
			g.Expect(after.reason("Progressing")).NotTo(Equal("Restarting"))
			sts := etcdStatefulSet(ctx, g, cluster)
			g.Expect(sts.Status.ObservedGeneration).To(Equal(sts.Generation), "the StatefulSet controller saw the current pod template")
			g.Expect(sts.Status.UpdatedReplicas).To(BeEquivalentTo(3), "every member runs the current pod template")
		}).WithContext(ctx).WithTimeout(5 * time.Minute).Should(Succeed())
		Expect(after.memberIDs()).To(ConsistOf(before.memberIDs()), "the same members, on their data")
		row := traffic.stopAndCheck(ctx)

		if equality.Semantic.DeepEqual(previousTemplate, etcdStatefulSet(ctx, Default, cluster).Spec.Template) {
			Expect(row.Restarts).To(BeZero(), "the pod template did not change: no member restarts")
		} else {
			By(fmt.Sprintf("the current release changed the members' pod template: %d member restarts", row.Restarts))
			Expect(row.Restarts).To(Equal(3), "each member restarted once, onto the current template")
		}

		By("the scale to 5 finished, the three members before it still there")
		scaled := expectEtcdReady(ctx, scaling, 5, version)
		Expect(scaled.memberIDs()).To(ContainElements(scalingBefore.memberIDs()))
		Eventually(func(g Gomega) {
			g.Expect(etcdStatefulSet(ctx, g, scaling).Status.UpdatedReplicas).To(BeEquivalentTo(5), "every member runs the current pod template")
		}).WithContext(ctx).WithTimeout(5 * time.Minute).Should(Succeed())
		scalingTraffic.stopAndCheck(ctx)
	}, SpecTimeout(15*time.Minute))
})
