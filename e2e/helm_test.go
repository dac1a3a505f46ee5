//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// helm runs the helm CLI `make` built (E2E_HELM) against the KUBECONFIG cluster.
func helm(ctx context.Context, args ...string) string {
	cmd := exec.CommandContext(ctx, requiredEnv("E2E_HELM"), args...)
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "helm %v:\n%s", args, out)
	return string(out)
}

// adoptForHelm lets a Helm release take over a cluster-scoped object other specs made
// without Helm (the CRDs they install), as Helm adopts objects carrying its ownership marks.
func adoptForHelm(ctx context.Context, obj client.Object, release, namespace string) {
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		Expect(client.IgnoreNotFound(err)).To(Succeed())
		return
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":      map[string]string{"app.kubernetes.io/managed-by": "Helm"},
		"annotations": map[string]string{"meta.helm.sh/release-name": release, "meta.helm.sh/release-namespace": namespace},
	}})
	Expect(err).NotTo(HaveOccurred())
	Expect(k8sClient.Patch(ctx, obj, client.RawPatch("application/merge-patch+json", patch))).To(Succeed())
}

var _ = Describe("gordon installed with Helm", Ordered, func() {
	const release = "gordon"
	var (
		ns     string
		gordon *unstructured.Unstructured
	)
	chart := filepath.Join("..", "operators", "gordon", "dist", "chart")

	BeforeAll(func(ctx SpecContext) {
		requireRealNode(ctx)
		ns = createNamespace(ctx, "helm-gordon", nil)
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		crd.SetName("gordons.operator.prgcont.cz")
		adoptForHelm(ctx, crd, release, ns)
	})

	It("runs the manager where its values place it, watching its own namespace only", func(ctx SpecContext) {
		placement, err := json.Marshal(realNodePlacement())
		Expect(err).NotTo(HaveOccurred())
		var values map[string]any
		Expect(json.Unmarshal(placement, &values)).To(Succeed())
		helm(ctx, "install", release, chart, "--namespace", ns, "--wait", "--timeout", "3m",
			"--set", "watchNamespaces={"+ns+"}",
			"--set-json", "manager.nodeSelector="+mustJSON(values["nodeSelector"]),
			"--set-json", "manager.tolerations="+mustJSON(values["tolerations"]))
		managerOnRealNode(ctx, ns)

		sa := "gordon-controller-manager"
		other := createNamespace(ctx, "helm-gordon-other", nil)
		expectCanI(ctx, ns, sa, "create", "pods", "yes", "--namespace", ns)
		expectCanI(ctx, ns, sa, "create", "pods", "no", "--namespace", other)
		expectCanI(ctx, ns, sa, "list", "gordons.operator.prgcont.cz", "no", "--namespace", other)

		By("reconciling the sample in its namespace")
		gordon = applySample(ctx, "gordon", "operator_v1_gordon.yaml", ns)
		expectGordonRunning(ctx, gordon, 3)
	})

	It("rolls the manager on helm upgrade with a changed value", func(ctx SpecContext) {
		before := managerOnRealNode(ctx, ns)
		helm(ctx, "upgrade", release, chart, "--namespace", ns, "--reuse-values", "--wait", "--timeout", "3m",
			"--set", "manager.resources.limits.memory=300Mi")
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
			g.Expect(pods.Items).To(HaveLen(1))
			g.Expect(pods.Items[0].UID).NotTo(Equal(before.UID))
			g.Expect(pods.Items[0].Spec.Containers[0].Resources.Limits.Memory().String()).To(Equal("300Mi"))
			g.Expect(podReady(&pods.Items[0])).To(BeTrue())
		}).WithContext(ctx).Should(Succeed())
		Expect(helm(ctx, "history", release, "--namespace", ns)).To(ContainSubstring("Upgrade complete"))
	})

	It("removes the operator on helm uninstall and keeps the CRD and the custom resources", func(ctx SpecContext) {
		helm(ctx, "uninstall", release, "--namespace", ns, "--wait", "--timeout", "3m")
		Eventually(func(g Gomega) {
			deployments := &appsv1.DeploymentList{}
			g.Expect(k8sClient.List(ctx, deployments, client.InNamespace(ns))).To(Succeed())
			g.Expect(deployments.Items).To(BeEmpty())
		}).WithContext(ctx).Should(Succeed())
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "gordons.operator.prgcont.cz"}, crd)).To(Succeed(), "crd.keep keeps the CRD")
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(gordon), gordon.DeepCopy())).To(Succeed(), "and the Gordon")
	})
})

func mustJSON(v any) string {
	data, err := json.Marshal(v)
	Expect(err).NotTo(HaveOccurred())
	return string(data)
}
