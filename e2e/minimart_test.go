//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// minimartSample is the name of the sample Minimart, its release and its Deployment and Service.
const minimartSample = "minimart-sample"

var _ = Describe("The minimart operator on a real node", Ordered, func() {
	var (
		ns      string
		bin     string
		manager *managerProcess
		sample  *unstructured.Unstructured
	)

	// pageURLs are the sample's page through the NodePort on the host address, where the one
	// kube-proxy of the real nodes serves NodePorts for all of them (hostAddress), and through
	// the Service's cluster IP.
	pageURLs := func(ctx context.Context, g Gomega) []string {
		svc := &corev1.Service{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: minimartSample}, svc)).To(Succeed())
		g.Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeNodePort))
		g.Expect(svc.Spec.Ports).To(HaveLen(1))
		port := svc.Spec.Ports[0]
		g.Expect(port.Port).To(Equal(int32(80)))
		return []string{
			"http://" + net.JoinHostPort(hostAddress(), strconv.Itoa(int(port.NodePort))) + "/",
			"http://" + svc.Spec.ClusterIP + "/",
		}
	}
	// expectPage fetches the page both ways until it shows the store and its products.
	expectPage := func(ctx context.Context, want ...string) {
		Eventually(func(g Gomega) {
			for _, url := range pageURLs(ctx, g) {
				code, body, err := httpGet(ctx, url)
				g.Expect(err).NotTo(HaveOccurred(), url)
				g.Expect(code).To(Equal(200), url)
				for _, w := range want {
					g.Expect(body).To(ContainSubstring(w), url)
				}
			}
		}).WithContext(ctx).Should(Succeed())
	}
	// expectReadyAt waits until the sample is Ready at its generation, as revision.
	expectReadyAt := func(ctx context.Context, revision int64) {
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(sample), sample)).To(Succeed())
			g.Expect(conditionStatus(ctx, sample, "Ready")).To(Equal("True"))
			observed, _, _ := unstructured.NestedInt64(sample.Object, "status", "observedGeneration")
			g.Expect(observed).To(Equal(sample.GetGeneration()))
			got, _, _ := unstructured.NestedInt64(sample.Object, "status", "deployedRelease", "revision")
			g.Expect(got).To(Equal(revision))
		}).WithContext(ctx).Should(Succeed())
	}
	helmIn := func(ctx context.Context, args ...string) string {
		return helm(ctx, append(args, "--namespace", ns)...)
	}
	setStoreName := func(ctx context.Context, name string) {
		patch := client.RawPatch("application/merge-patch+json", []byte(fmt.Sprintf(`{"spec":{"storeName":%q}}`, name)))
		Expect(k8sClient.Patch(ctx, sample, patch)).To(Succeed())
	}

	BeforeAll(func(ctx SpecContext) {
		requireRealNode(ctx)
		ns = realNodeNamespace(ctx, "e2e-minimart")
		installCRDs("minimart")
		bin = buildManager("minimart")
		manager = startManager(bin, "minimart", []string{"WATCH_NAMESPACE=" + ns})
		// Whichever manager runs last (specs restart it) stops with the container.
		DeferCleanup(func() { manager.stop() })
	})

	It("installs the sample as a Helm release whose page answers through the NodePort and the ClusterIP", func(ctx SpecContext) {
		sample = applySample(ctx, "minimart", "charts_v1alpha1_minimart.yaml", ns)
		expectReadyAt(ctx, 1)
		pods := &corev1.PodList{}
		Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/instance": minimartSample})).To(Succeed())
		Expect(pods.Items).To(HaveLen(1))
		Expect(pods.Items[0].Spec.NodeName).To(beARealNode())
		expectPage(ctx, "<h1>Minimart</h1>", "<li>apples: 3.50</li><li>bread: 2.20</li>", "Served by "+pods.Items[0].Name)

		By("helm sees the release: list, history, values")
		Expect(helmIn(ctx, "list")).To(MatchRegexp(minimartSample + `\s+` + ns + `\s+1\s+.*deployed\s+minimart-0\.1\.0\s+0\.1\.0`))
		Expect(helmIn(ctx, "history", minimartSample)).To(ContainSubstring("Install complete"))
		Expect(helmIn(ctx, "get", "values", minimartSample)).To(ContainSubstring("storeName: Minimart"))
	})

	It("restores a deleted Service and a scaled Deployment, without a new revision", func(ctx SpecContext) {
		svc := &corev1.Service{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: minimartSample}, svc)).To(Succeed())
		Expect(k8sClient.Delete(ctx, svc)).To(Succeed())
		deployment := &appsv1.Deployment{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: minimartSample}, deployment)).To(Succeed())
		Expect(k8sClient.Patch(ctx, deployment, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"replicas":3}}`)))).To(Succeed())

		Eventually(func(g Gomega) {
			restored := &corev1.Service{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(svc), restored)).To(Succeed())
			g.Expect(restored.UID).NotTo(Equal(svc.UID))
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(deployment), deployment)).To(Succeed())
			g.Expect(*deployment.Spec.Replicas).To(Equal(int32(1)))
		}).WithContext(ctx).Should(Succeed())
		expectReadyAt(ctx, 1)
		expectPage(ctx, "<h1>Minimart</h1>")
		Expect(strings.Count(helmIn(ctx, "history", minimartSample), "\n")).To(Equal(2), "a header and one revision")
	})

	It("upgrades the release once for a spec change, and the page shows it", func(ctx SpecContext) {
		setStoreName(ctx, "Corner Minimart")
		expectReadyAt(ctx, 2)
		expectPage(ctx, "<h1>Corner Minimart</h1>")
		Expect(helmIn(ctx, "get", "values", minimartSample)).To(ContainSubstring("storeName: Corner Minimart"))
	})

	It("recovers the release a manager killed mid-upgrade left pending, and converges", func(ctx SpecContext) {
		By("restarting the manager slowed to one request a second, so that an upgrade takes seconds")
		manager.kill()
		manager = startManager(bin, "minimart", []string{"WATCH_NAMESPACE=" + ns}, "--kube-api-qps=1", "--kube-api-burst=1")
		setStoreName(ctx, "Killed Minimart")

		By("killing it while revision 3 is pending-upgrade")
		Eventually(func(g Gomega) {
			secrets := &corev1.SecretList{}
			g.Expect(k8sClient.List(ctx, secrets, client.InNamespace(ns),
				client.MatchingLabels{"owner": "helm", "name": minimartSample, "version": "3"})).To(Succeed())
			g.Expect(secrets.Items).To(HaveLen(1))
			g.Expect(secrets.Items[0].Labels).To(HaveKeyWithValue("status", "pending-upgrade"))
		}).WithContext(ctx).WithPolling(50 * time.Millisecond).Should(Succeed())
		manager.kill()
		Expect(helmIn(ctx, "history", minimartSample)).To(MatchRegexp(`3\s+.*pending-upgrade`))

		By("a restarted manager marks it failed and upgrades again")
		manager = startManager(bin, "minimart", []string{"WATCH_NAMESPACE=" + ns})
		expectReadyAt(ctx, 4)
		expectPage(ctx, "<h1>Killed Minimart</h1>")
		history := helmIn(ctx, "history", minimartSample)
		Expect(history).To(MatchRegexp(`3\s+.*failed\s+minimart-0\.1\.0\s+0\.1\.0\s+pending-upgrade was interrupted`))
		Expect(history).To(MatchRegexp(`4\s+.*deployed\s+minimart-0\.1\.0`))
	})

	It("puts back, as the spec says, a release rolled back or uninstalled by hand with helm", func(ctx SpecContext) {
		By("helm rollback to revision 2 (another store name) is revision 5; the operator upgrades to the spec: 6")
		helmIn(ctx, "rollback", minimartSample, "2")
		expectReadyAt(ctx, 6)
		expectPage(ctx, "<h1>Killed Minimart</h1>")
		Expect(helmIn(ctx, "history", minimartSample)).To(MatchRegexp(`5\s+.*superseded\s+minimart-0\.1\.0\s+0\.1\.0\s+Rollback to 2`))

		By("helm uninstall: the operator installs the release again, revision 1")
		helmIn(ctx, "uninstall", minimartSample)
		expectReadyAt(ctx, 1)
		expectPage(ctx, "<h1>Killed Minimart</h1>")
	})

	It("uninstalls the release when the Minimart is deleted, and leaves nothing behind", func(ctx SpecContext) {
		Expect(k8sClient.Delete(ctx, sample)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(sample), sample)).NotTo(Succeed())
			for _, list := range []client.ObjectList{&appsv1.DeploymentList{}, &corev1.ServiceList{}, &corev1.PodList{}} {
				g.Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(Succeed())
				g.Expect(list).To(HaveField("Items", BeEmpty()))
			}
			secrets := &corev1.SecretList{}
			g.Expect(k8sClient.List(ctx, secrets, client.InNamespace(ns), client.MatchingLabels{"owner": "helm"})).To(Succeed())
			g.Expect(secrets.Items).To(BeEmpty())
		}).WithContext(ctx).Should(Succeed())
		Expect(helmIn(ctx, "list", "--all")).NotTo(ContainSubstring(minimartSample))
	})
})
