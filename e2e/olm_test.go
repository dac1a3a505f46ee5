//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The catalog `make olm-up` serves (catalog/, bundles inline) on loopback.
const (
	olmNamespace  = "olm"
	catalogSource = "quintet"
)

func olmObject(apiVersion, kind, namespace, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// subscribe installs package pkg into namespace (an OperatorGroup of that namespace only) from
// the Quintet catalog; extra is merged into the Subscription's spec.
func subscribe(ctx context.Context, namespace, pkg string, extra map[string]any) {
	og := olmObject("operators.coreos.com/v1", "OperatorGroup", namespace, "quintet", map[string]any{
		"targetNamespaces": []any{namespace},
	})
	Expect(k8sClient.Create(ctx, og)).To(Succeed())
	spec := map[string]any{
		"name": pkg, "channel": "stable", "source": catalogSource, "sourceNamespace": olmNamespace,
		"installPlanApproval": "Automatic",
	}
	for k, v := range extra {
		spec[k] = v
	}
	Expect(k8sClient.Create(ctx, olmObject("operators.coreos.com/v1alpha1", "Subscription", namespace, pkg, spec))).To(Succeed())
}

func getOLM(ctx context.Context, g Gomega, kind, namespace, name string) *unstructured.Unstructured {
	u := olmObject("operators.coreos.com/v1alpha1", kind, namespace, name, nil)
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(u), u)).To(Succeed())
	return u
}

// expectInstalled waits for the CSV to succeed, through a Complete InstallPlan, with every
// Deployment of its install strategy Available, and returns the CSV.
func expectInstalled(ctx context.Context, namespace, csvName string) *unstructured.Unstructured {
	var csv *unstructured.Unstructured
	Eventually(func(g Gomega) {
		plans := &unstructured.UnstructuredList{}
		plans.SetAPIVersion("operators.coreos.com/v1alpha1")
		plans.SetKind("InstallPlanList")
		g.Expect(k8sClient.List(ctx, plans, client.InNamespace(namespace))).To(Succeed())
		g.Expect(plans.Items).To(ContainElement(SatisfyAll(
			WithTransform(func(u unstructured.Unstructured) []any {
				names, _, _ := unstructured.NestedSlice(u.Object, "spec", "clusterServiceVersionNames")
				return names
			}, ContainElement(csvName)),
			WithTransform(func(u unstructured.Unstructured) string {
				phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
				return phase
			}, Equal("Complete")),
		)), "no Complete InstallPlan for %s", csvName)
		csv = getOLM(ctx, g, "ClusterServiceVersion", namespace, csvName)
		phase, _, _ := unstructured.NestedString(csv.Object, "status", "phase")
		g.Expect(phase).To(Equal("Succeeded"), "CSV %s", csvName)
		deployments, _, _ := unstructured.NestedSlice(csv.Object, "spec", "install", "spec", "deployments")
		g.Expect(deployments).NotTo(BeEmpty())
		for _, d := range deployments {
			name := d.(map[string]any)["name"].(string)
			deployment := &appsv1.Deployment{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, deployment)).To(Succeed())
			g.Expect(deployment.Status.AvailableReplicas).To(BeNumerically(">=", 1), "deployment %s", name)
		}
	}).WithContext(ctx).Should(Succeed())
	return csv
}

// installedCSV waits until the Subscription names its installed CSV.
func installedCSV(ctx context.Context, namespace, pkg string) string {
	var name string
	Eventually(func(g Gomega) {
		sub := getOLM(ctx, g, "Subscription", namespace, pkg)
		name, _, _ = unstructured.NestedString(sub.Object, "status", "installedCSV")
		g.Expect(name).NotTo(BeEmpty())
	}).WithContext(ctx).Should(Succeed())
	return name
}

// approve approves the InstallPlan the Subscription waits on (Manual approval), once OLM
// has finished it (phase RequiresApproval) and it installs csvName.
func approve(ctx context.Context, namespace, pkg, csvName string) {
	Eventually(func(g Gomega) {
		sub := getOLM(ctx, g, "Subscription", namespace, pkg)
		planName, _, _ := unstructured.NestedString(sub.Object, "status", "installPlanRef", "name")
		g.Expect(planName).NotTo(BeEmpty(), "no InstallPlan yet")
		plan := getOLM(ctx, g, "InstallPlan", namespace, planName)
		names, _, _ := unstructured.NestedSlice(plan.Object, "spec", "clusterServiceVersionNames")
		phase, _, _ := unstructured.NestedString(plan.Object, "status", "phase")
		g.Expect(names).To(ConsistOf(csvName))
		g.Expect(phase).To(Equal("RequiresApproval"))
		g.Expect(unstructured.SetNestedField(plan.Object, true, "spec", "approved")).To(Succeed())
		g.Expect(k8sClient.Update(ctx, plan)).To(Succeed())
	}).WithContext(ctx).Should(Succeed())
}

// expectCSVGone waits until the CSV is gone: an upgrade replaced it.
func expectCSVGone(ctx context.Context, namespace, csvName string) {
	Eventually(func(g Gomega) {
		old := olmObject("operators.coreos.com/v1alpha1", "ClusterServiceVersion", namespace, csvName, nil)
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(old), old)).NotTo(Succeed(), csvName+" must be replaced")
	}).WithContext(ctx).Should(Succeed())
}

// containersHome is a $HOME for tools that pull images through containers/image (opm,
// operator-sdk), which wants a trust policy there: images come from the local registry.
func containersHome() string {
	home := GinkgoT().TempDir()
	policy := filepath.Join(home, ".config", "containers", "policy.json")
	Expect(os.MkdirAll(filepath.Dir(policy), 0o755)).To(Succeed())
	Expect(os.WriteFile(policy, []byte(`{"default":[{"type":"insecureAcceptAnything"}]}`), 0o644)).To(Succeed())
	return home
}

// catalogPackages are the packages of the committed catalog (catalog/<package>/).
func catalogPackages() []string {
	entries, err := os.ReadDir(filepath.Join("..", "catalog"))
	Expect(err).NotTo(HaveOccurred())
	var packages []string
	for _, e := range entries {
		if e.IsDir() {
			packages = append(packages, e.Name())
		}
	}
	Expect(packages).NotTo(BeEmpty())
	return packages
}

// opmRender renders a catalog (folder or image) with opm into its blobs, keyed by
// schema/package/name so that two renderings compare regardless of order.
func opmRender(ctx context.Context, env []string, args ...string) map[string]map[string]any {
	cmd := exec.CommandContext(ctx, requiredEnv("E2E_OPM"), append([]string{"render", "-o", "json"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred(), stderr.String())
	blobs := map[string]map[string]any{}
	decoder := json.NewDecoder(strings.NewReader(string(out)))
	for decoder.More() {
		var blob map[string]any
		Expect(decoder.Decode(&blob)).To(Succeed())
		blobs[blob["schema"].(string)+"/"+stringOf(blob["package"])+"/"+stringOf(blob["name"])] = blob
	}
	return blobs
}

func stringOf(v any) string { s, _ := v.(string); return s }

// channelHead is the head of a channel of the committed catalog: the entry no other entry
// replaces, where a Subscription to the channel ends up.
func channelHead(ctx context.Context, pkg, channel string) string {
	blob := opmRender(ctx, nil, filepath.Join("..", "catalog"))["olm.channel/"+pkg+"/"+channel]
	Expect(blob).NotTo(BeNil(), "no channel %s in package %s", channel, pkg)
	entries, _ := blob["entries"].([]any)
	replaced := map[string]bool{}
	for _, e := range entries {
		replaced[stringOf(e.(map[string]any)["replaces"])] = true
	}
	var heads []string
	for _, e := range entries {
		if name := stringOf(e.(map[string]any)["name"]); !replaced[name] {
			heads = append(heads, name)
		}
	}
	Expect(heads).To(HaveLen(1), "channel %s of %s", channel, pkg)
	return heads[0]
}

// expectBundleNetworkPolicies checks that OLM made the NetworkPolicies the installed bundle
// ships (the manager's: metrics scrapes only) in ns, each selecting the manager's pod.
func expectBundleNetworkPolicies(ctx context.Context, ns, pkg, csvName string) {
	op, version := strings.TrimPrefix(pkg, "quintet-"), strings.TrimPrefix(csvName, pkg+".v")
	files, err := filepath.Glob(filepath.Join("..", "bundles", op, version, "manifests", "*_networkpolicy.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(files).NotTo(BeEmpty(), "bundle %s %s ships the manager's NetworkPolicy", op, version)
	for _, f := range files {
		name, _, _ := strings.Cut(filepath.Base(f), "_")
		policy := &networkingv1.NetworkPolicy{}
		Eventually(func() error {
			return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, policy)
		}).WithContext(ctx).Should(Succeed(), "OLM makes NetworkPolicy %s/%s", ns, name)
		selector, err := metav1.LabelSelectorAsSelector(&policy.Spec.PodSelector)
		Expect(err).NotTo(HaveOccurred())
		pods := &corev1.PodList{}
		Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: selector})).To(Succeed())
		Expect(pods.Items).NotTo(BeEmpty(), "NetworkPolicy %s/%s selects the manager's pod", ns, name)
	}
}

var _ = Describe("Quintet through OLM", func() {
	BeforeEach(func(ctx SpecContext) {
		Eventually(func(g Gomega) {
			source := getOLM(ctx, g, "CatalogSource", olmNamespace, catalogSource)
			state, _, _ := unstructured.NestedString(source.Object, "status", "connectionState", "lastObservedState")
			g.Expect(state).To(Equal("READY"), "CatalogSource %s/%s (make olm-up)", olmNamespace, catalogSource)
		}).WithContext(ctx).Should(Succeed())
	})

	It("installs every package through a Subscription", func(ctx SpecContext) {
		for _, pkg := range catalogPackages() {
			By("subscribing to " + pkg)
			ns := createNamespace(ctx, "olm-"+strings.TrimPrefix(pkg, "quintet-"), nil)
			subscribe(ctx, ns, pkg, nil)
			csv := expectInstalled(ctx, ns, installedCSV(ctx, ns, pkg))
			GinkgoWriter.Printf("%s: %s Succeeded in %s\n", pkg, csv.GetName(), ns)
			expectBundleNetworkPolicies(ctx, ns, pkg, csv.GetName())
		}
	})

	// Serial: OLM puts v0.1.0's CRD in place until the upgrade, under every other Gordon.
	It("upgrades gordon from v0.1.0 straight to the channel head through its skipRange, keeping its custom resources", Serial, func(ctx SpecContext) {
		const first = "quintet-gordon.v0.1.0" // the first published version
		version := operatorVersion("gordon")
		head := channelHead(ctx, "quintet-gordon", "stable")
		Expect(head).To(Equal("quintet-gordon.v"+version), "the committed catalog's head is gordon's current version")
		ns := createNamespace(ctx, "olm-upgrade", nil)
		subscribe(ctx, ns, "quintet-gordon", map[string]any{"installPlanApproval": "Manual", "startingCSV": first})
		approve(ctx, ns, "quintet-gordon", first)
		expectInstalled(ctx, ns, first)

		By("creating a Gordon under v0.1.0")
		gordon := &unstructured.Unstructured{}
		gordon.SetGroupVersionKind(gordonGVK)
		gordon.SetNamespace(ns)
		gordon.SetName("survivor")
		Expect(unstructured.SetNestedField(gordon.Object, int64(2), "spec", "gordon", "replicas")).To(Succeed())
		Expect(k8sClient.Create(ctx, gordon)).To(Succeed())

		By("approving the upgrade the channel offers: its head, whose skipRange covers v0.1.0, not each version between")
		approve(ctx, ns, "quintet-gordon", head)
		csv := expectInstalled(ctx, ns, head)
		replaces, _, _ := unstructured.NestedString(csv.Object, "spec", "replaces")
		Expect(replaces).To(Equal(first), "OLM records the CSV the upgrade replaced")
		expectCSVGone(ctx, ns, first)
		Eventually(func(g Gomega) {
			manager := &appsv1.Deployment{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gordon-controller-manager"}, manager)).To(Succeed())
			g.Expect(manager.Spec.Template.Spec.Containers[0].Image).To(HaveSuffix(":v" + version))
		}).WithContext(ctx).Should(Succeed())

		By("finding the Gordon as it was")
		got := gordon.DeepCopy()
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(gordon), got)).To(Succeed())
		Expect(got.GetUID()).To(Equal(gordon.GetUID()))
		replicas, _, _ := unstructured.NestedInt64(got.Object, "spec", "gordon", "replicas")
		Expect(replicas).To(BeEquivalentTo(2))
	})

	It("serves, as a catalog image pulled back from the registry, exactly the committed catalog", func(ctx SpecContext) {
		fromImage := opmRender(ctx, []string{"HOME=" + containersHome()}, requiredEnv("E2E_CATALOG_IMAGE"), "--use-http")
		committed := opmRender(ctx, nil, filepath.Join("..", "catalog"))
		Expect(committed).To(HaveKey("olm.channel/quintet-gordon/stable"))
		Expect(fromImage).To(Equal(committed))
	})

	It("runs a bundle the way operator-sdk run bundle does (make run-bundle)", func(ctx SpecContext) {
		const operator = "etcd-cluster"
		version := operatorVersion(operator)
		ns := createNamespace(ctx, "olm-run-bundle", nil)
		runOLMScript(ctx, "run-bundle", operator, filepath.Join("..", "bundles", operator, version), ns)
		expectInstalled(ctx, ns, "quintet-"+operator+".v"+version)
	})
})
