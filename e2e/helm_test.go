//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
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

// chartFromRegistry is the part of a helm command that names an operator's chart as `make
// helm-push` put it in the registry: its OCI reference, its version, and the flags the registry
// needs (plain HTTP here).
func chartFromRegistry(operator string) []string {
	return append([]string{requiredEnv("E2E_CHART_REPO") + "/" + operator, "--version", operatorVersion(operator)},
		strings.Fields(os.Getenv("E2E_HELM_REGISTRY_FLAGS"))...)
}

// installFromRegistry installs an operator's chart from the registry as release <operator> in
// namespace, watching that namespace only, with the manager placed on the real node through
// its values; set adds values.
func installFromRegistry(ctx context.Context, operator, namespace string, set ...string) {
	placement := realNodePlacement()
	args := append([]string{"install", operator}, chartFromRegistry(operator)...)
	args = append(args, "--namespace", namespace, "--wait", "--timeout", "3m",
		"--set", "watchNamespaces={"+namespace+"}",
		"--set-json", "manager.nodeSelector="+mustJSON(placement["nodeSelector"]),
		"--set-json", "manager.tolerations="+mustJSON(placement["tolerations"]))
	helm(ctx, append(args, set...)...)
	managerOnRealNode(ctx, namespace)
}

// expectOwnNamespaceOnly checks, with kubectl auth can-i as the manager's service account, that
// a release watching its own namespace may create the operator's workload and list its kind
// there, and neither elsewhere.
func expectOwnNamespaceOnly(ctx context.Context, operator, namespace, workload, kind string) {
	sa := operator + "-controller-manager"
	other := createNamespace(ctx, "helm-other-"+operator, nil)
	By(namespace + "/" + sa + " may create " + workload + " and list " + kind + " in " + namespace + ", not in " + other)
	for _, verbResource := range [][2]string{{"create", workload}, {"list", kind}} {
		expectCanI(ctx, namespace, sa, verbResource[0], verbResource[1], "yes", "--namespace", namespace)
		expectCanI(ctx, namespace, sa, verbResource[0], verbResource[1], "no", "--namespace", other)
	}
	expectCanI(ctx, namespace, sa, "list", "pods", "no", "--all-namespaces")
}

// expectUninstalled runs helm uninstall and checks that the operator is gone from namespace
// and that the custom resource it reconciled stays.
func expectUninstalled(ctx context.Context, release, namespace string, kept *unstructured.Unstructured) {
	helm(ctx, "uninstall", release, "--namespace", namespace, "--wait", "--timeout", "3m")
	Eventually(func(g Gomega) {
		deployments := &appsv1.DeploymentList{}
		g.Expect(k8sClient.List(ctx, deployments, client.InNamespace(namespace), client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
		g.Expect(deployments.Items).To(BeEmpty(), "the manager's Deployment")
	}).WithContext(ctx).Should(Succeed())
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(kept), kept.DeepCopy())).To(Succeed(), "the %s stays", kept.GetKind())
}

// expectServedByRESTAPI reads obj through the REST API a release serves (api.enable), at its
// Service's cluster IP, with the token of a ServiceAccount that may only get objects of kind
// (plural.group) in obj's namespace.
func expectServedByRESTAPI(ctx context.Context, operator, kind string, obj *unstructured.Unstructured) {
	plural, group, _ := strings.Cut(kind, ".")
	ns := obj.GetNamespace()
	token := serviceAccountToken(ctx, ns, "reader", rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{plural}, Verbs: []string{"get"}})
	service := &corev1.Service{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: operator + "-controller-manager-api"}, service)).To(Succeed())
	url := "https://" + service.Spec.ClusterIP + "/api/v1/namespaces/" + ns + "/" + plural + "/" + obj.GetName()
	By("GET " + url + " with the reader's token")
	Eventually(func(g Gomega) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		g.Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := insecureClient.Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(resp.StatusCode).To(Equal(http.StatusOK), string(body))
		g.Expect(string(body)).To(ContainSubstring(`"uid":"` + string(obj.GetUID()) + `"`))
	}).WithContext(ctx).Should(Succeed())
}

// Serial: the release adopts the Gordon CRD, which OLM, installing gordon for other specs,
// would take back (it replaces a CRD's labels and annotations with its bundle's).
var _ = Describe("gordon installed with Helm", Ordered, Serial, func() {
	const release = "gordon"
	var (
		ns     string
		gordon *unstructured.Unstructured
	)

	BeforeAll(func(ctx SpecContext) {
		requireRealNode(ctx)
		ns = createNamespace(ctx, "helm-gordon", nil)
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		crd.SetName("gordons.operator.prgcont.cz")
		adoptForHelm(ctx, crd, release, ns)
	})

	It("runs the manager from the registry's chart where its values place it, watching its own namespace only", func(ctx SpecContext) {
		installFromRegistry(ctx, "gordon", ns)
		expectOwnNamespaceOnly(ctx, "gordon", ns, "pods", "gordons.operator.prgcont.cz")
		By("reconciling the sample in its namespace")
		gordon = applySample(ctx, "gordon", "operator_v1_gordon.yaml", ns)
		expectGordonRunning(ctx, gordon, 3)
	})

	It("rolls the manager on helm upgrade with a changed value", func(ctx SpecContext) {
		before := managerOnRealNode(ctx, ns)
		args := append([]string{"upgrade", release}, chartFromRegistry("gordon")...)
		helm(ctx, append(args, "--namespace", ns, "--reuse-values", "--wait", "--timeout", "3m",
			"--set", "manager.resources.limits.memory=300Mi")...)
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
		expectUninstalled(ctx, release, ns, gordon)
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "gordons.operator.prgcont.cz"}, crd)).To(Succeed(), "crd.keep keeps the CRD")
	})
})

// The other operators' charts install as a second release of an operator does, where its CRDs
// are already in place (crd.enable=false): gordon's release above owns and keeps its CRD. They
// turn the REST API on (api.enable).
var _ = Describe("An operator's chart from the registry, installed where its CRDs already are", func() {
	BeforeEach(func(ctx SpecContext) { requireRealNode(ctx) })

	DescribeTable("runs the manager on the real node, reconciles the sample, acts in its namespace only, and goes with helm uninstall",
		func(ctx SpecContext, operator, workload, kind string, reconciled func(ctx context.Context, namespace string) *unstructured.Unstructured) {
			installCRDs(operator)
			ns := createNamespace(ctx, "helm-"+operator, map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
			installFromRegistry(ctx, operator, ns, "--set", "crd.enable=false", "--set", "api.enable=true")
			expectOwnNamespaceOnly(ctx, operator, ns, workload, kind)
			cr := reconciled(ctx, ns)
			expectServedByRESTAPI(ctx, operator, kind, cr)
			expectUninstalled(ctx, operator, ns, cr)
		},
		Entry("etcd-cluster: three real members Ready", "etcd-cluster", "statefulsets.apps", "etcdclusters.etcd.database.coreos.com",
			func(ctx context.Context, namespace string) *unstructured.Unstructured {
				DeferCleanup(func(ctx SpecContext) { // before the namespace goes
					if CurrentSpecReport().Failed() {
						dumpForFailure(ctx, "helm-etcd-cluster", namespace, namespace)
					}
				})
				cluster := createDemoEtcdCluster(ctx, namespace)
				expectEtcdReady(ctx, cluster, 3, requiredEnv("E2E_ETCD_VERSION"))
				return cluster
			}),
		Entry("kre-runtime: the sample Runtime Ready", "kre-runtime", "statefulsets.apps", "runtimes.kre.konstellation.io",
			func(ctx context.Context, namespace string) *unstructured.Unstructured {
				runtime := applySample(ctx, "kre-runtime", "kre_v1alpha1_runtime.yaml", namespace)
				Eventually(func() string { return conditionStatus(ctx, runtime, "Ready") }).WithContext(ctx).Should(Equal("True"))
				return runtime
			}),
		Entry("ptemplate-device: the sample waiting for KMM or its module", "ptemplate-device", "daemonsets.apps", "ptemplates.ptemplates.pt.example.com",
			func(ctx context.Context, namespace string) *unstructured.Unstructured {
				pt := applySample(ctx, "ptemplate-device", "ptemplates_v1alpha_ptemplate.yaml", namespace)
				expectWaitingForKMM(ctx, pt)
				return pt
			}),
		Entry("minimart: the sample's release Ready", "minimart", "deployments.apps", "minimarts.charts.samutup.com",
			func(ctx context.Context, namespace string) *unstructured.Unstructured {
				minimart := applySample(ctx, "minimart", "charts_v1alpha1_minimart.yaml", namespace)
				Eventually(func() string { return conditionStatus(ctx, minimart, "Ready") }).WithContext(ctx).Should(Equal("True"))
				Expect(helm(ctx, "list", "--namespace", namespace)).To(ContainSubstring(minimartSample))
				return minimart
			}),
	)
})

func mustJSON(v any) string {
	data, err := json.Marshal(v)
	Expect(err).NotTo(HaveOccurred())
	return string(data)
}
