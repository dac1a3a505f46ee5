//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"

	. "github.com/onsi/ginkgo/v2" //nolint:revive // ginkgo's DSL
	. "github.com/onsi/gomega"    //nolint:revive // gomega's DSL
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// gettingStarted is the page whose commands for the local cluster e2e runs as written.
const gettingStarted = "docs/getting-started.md"

// docBlock is the ```sh block that follows the comment `<!-- e2e: name -->` in
// docs/getting-started.md.
func docBlock(name string) string {
	page := gettingStarted
	data, err := os.ReadFile(filepath.Join(repoRoot, page))
	Expect(err).NotTo(HaveOccurred())
	re := regexp.MustCompile("(?s)<!-- e2e: " + regexp.QuoteMeta(name) + " -->\n```sh\n(.*?)```")
	m := re.FindSubmatch(data)
	Expect(m).NotTo(BeNil(), "%s has no ```sh block after <!-- e2e: %s -->", page, name)
	return string(m[1])
}

// runDocBlock runs the block name of docs/getting-started.md in bash from the repository root,
// as a user pastes it into a terminal there, but stopping at the first command that fails; it
// returns what it printed.
func runDocBlock(ctx context.Context, name string) string {
	page := gettingStarted
	block := docBlock(name)
	By("running " + page + "'s block " + name + " as written:\n" + block)
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", block)
	cmd.Dir = repoRoot
	cmd.Env = newUserEnv()
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "%s, block %s:\n%s", page, name, out)
	return string(out)
}

// The commands docs/getting-started.md gives for the local cluster, run as written.
var _ = Describe("docs/getting-started.md, run as written", func() {
	It("subscribes to quintet-gordon as the OLM section says: the CSV succeeds and the manager runs", func(ctx SpecContext) {
		DeferCleanup(func(ctx SpecContext) { // the page's namespace, and with it what OLM made there
			Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gordon"}}))).To(Succeed())
		})
		out := runDocBlock(ctx, "olm-subscribe")
		csv := "quintet-gordon.v" + operatorVersion("gordon")
		Expect(out).To(MatchRegexp(regexp.QuoteMeta(csv)+`\s.*Succeeded`), "the page names the channel head's CSV, and it succeeded")
		expectInstalled(ctx, "gordon", csv)
		deployments := &appsv1.DeploymentList{}
		Expect(k8sClient.List(ctx, deployments, client.InNamespace("gordon"))).To(Succeed())
		Expect(deployments.Items).To(ContainElement(HaveField("Name", "gordon-controller-manager")))
	})

	It("installs etcd-cluster's chart from the registry as the Helm section says, leaving the CRDs already there alone, and removes it", func(ctx SpecContext) {
		const release, namespace = "etcd-cluster", "etcd-system" // the page's
		// What the page's clean-up block removes, should the spec stop before it runs.
		DeferCleanup(func(ctx SpecContext) {
			helm(ctx, "uninstall", release, "--namespace", namespace, "--ignore-not-found", "--wait", "--timeout", "3m")
			Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}))).To(Succeed())
		})
		// Other specs install etcd-cluster's CRDs (kubectl, OLM) whenever they run; installing
		// them first makes the block take, every time, the branch the page is about.
		installCRDs("etcd-cluster")
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		crd.SetName("etcdclusters.etcd.database.coreos.com")

		out := runDocBlock(ctx, "helm-install")
		chart := "etcd-cluster-" + operatorVersion("etcd-cluster")
		Expect(out).To(MatchRegexp(`(?m)^etcd-cluster\s+etcd-system\s+1\s.*\sdeployed\s+`+regexp.QuoteMeta(chart)+`\s`),
			"helm list shows the release deployed, from the chart of the operator's version")
		Expect(out).To(MatchRegexp(`(?m)^etcd-cluster-controller-manager\s+1/1\s`), "kubectl shows the manager's Deployment ready")
		Expect(helm(ctx, "get", "values", release, "--namespace", namespace, "--output", "json")).
			To(MatchJSON(`{"crd": {"enable": false}, "watchNamespaces": ["etcd-system"]}`), "the CRDs were there, so the release goes without them")
		deployment := &appsv1.Deployment{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "etcd-cluster-controller-manager"}, deployment)).To(Succeed())
		Expect(deployment.Status.Conditions).To(ContainElement(SatisfyAll(
			HaveField("Type", appsv1.DeploymentAvailable), HaveField("Status", corev1.ConditionTrue))), "the manager's Deployment is available")
		managerRole := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "etcd-cluster-manager-role-" + namespace}}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(managerRole), managerRole)).To(Succeed(), "the release's ClusterRole")

		runDocBlock(ctx, "helm-uninstall")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(managerRole), managerRole)).To(Satisfy(apierrors.IsNotFound), "helm uninstall deletes the release's cluster-scoped objects")
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: namespace}, &corev1.Namespace{})).To(Satisfy(apierrors.IsNotFound), "kubectl delete namespace waits until it is gone")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(crd), crd)).To(Succeed(), "the CRDs stay")
		Expect(crd.GetAnnotations()).NotTo(HaveKeyWithValue("meta.helm.sh/release-namespace", namespace), "and were never the release's")
	})

	// Serial: the clean-up block deletes the Gordon CRD, under every other spec's Gordons.
	It("installs gordon with kustomize and kubectl as the kustomize section says, and removes it with its CRD", Serial, func(ctx SpecContext) {
		DeferCleanup(func() { installCRDs("gordon") }) // for the specs after this one
		runDocBlock(ctx, "kustomize-install")
		deployment := &appsv1.Deployment{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "gordon-system", Name: "gordon-controller-manager"}, deployment)).To(Succeed())
		Expect(deployment.Status.ReadyReplicas).To(BeEquivalentTo(1), "rollout status waited for it")
		Expect(deployment.Spec.Template.Spec.Containers[0].Image).To(Equal(requiredEnv("E2E_IMAGES") + "/gordon:v" + operatorVersion("gordon")))
		role := &rbacv1.ClusterRole{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "gordon-manager-role"}, role)).To(Succeed())

		runDocBlock(ctx, "kustomize-uninstall")
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Name: "gordon-system"}, &corev1.Namespace{}))
		}).WithContext(ctx).Should(BeTrue(), "the namespace is gone")
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Name: "gordon-manager-role"}, role))).To(BeTrue(), "the ClusterRole is gone")
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Name: "gordons.operator.prgcont.cz"}, crd))).To(BeTrue(), "the CRD is gone")
	})
})
