//go:build e2e

package e2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const gordonLabel = "operator.prgcont.cz/gordon"

var gordonGVK = schema.GroupVersionKind{Group: "operator.prgcont.cz", Version: "v1", Kind: "Gordon"}

// gordonPods lists the live (not terminating) pods labelled for a Gordon.
func gordonPods(ctx context.Context, g Gomega, namespace, name string) []corev1.Pod {
	return livePods(ctx, g, namespace, client.MatchingLabels{gordonLabel: name})
}

// expectGordonRunning waits until the Gordon has n Running pods, Ready, and lists them in status.
func expectGordonRunning(ctx context.Context, gordon *unstructured.Unstructured, n int) []corev1.Pod {
	var pods []corev1.Pod
	Eventually(func(g Gomega) {
		pods = gordonPods(ctx, g, gordon.GetNamespace(), gordon.GetName())
		g.Expect(pods).To(HaveLen(n))
		names := make([]any, 0, n)
		for _, p := range pods {
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
			names = append(names, p.Name)
		}
		listed, _, _ := unstructured.NestedSlice(gordonStatus(ctx, g, gordon), "pods")
		g.Expect(listed).To(ConsistOf(names...))
		g.Expect(conditionStatus(ctx, gordon, "Ready")).To(Equal("True"))
	}).WithContext(ctx).Should(Succeed())
	return pods
}

// gordonStatus reads the Gordon's status.
func gordonStatus(ctx context.Context, g Gomega, gordon *unstructured.Unstructured) map[string]any {
	got := gordon.DeepCopy()
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(gordon), got)).To(Succeed())
	status, _, _ := unstructured.NestedMap(got.Object, "status")
	return status
}

func scaleGordon(ctx context.Context, gordon *unstructured.Unstructured, replicas int) {
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"replicas":`+itoa(replicas)+`}}`))
	Expect(k8sClient.SubResource("scale").Patch(ctx, gordon, patch)).To(Succeed())
}

var _ = Describe("The gordon operator", Ordered, func() {
	var (
		ns, other, unwatched string
		gordon               *unstructured.Unstructured
	)

	BeforeAll(func(ctx SpecContext) {
		restricted := map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}
		ns = createNamespace(ctx, "e2e-gordon", restricted)
		other = createNamespace(ctx, "e2e-gordon-other", restricted)
		unwatched = createNamespace(ctx, "e2e-gordon-unwatched", restricted)
		// As OLM installs it for two target namespaces (olm.targetNamespaces).
		startOperator("gordon", []string{"WATCH_NAMESPACE=" + ns + "," + other})
	})

	It("runs the tutorial's sample as 3 Running pods listed in its status", func(ctx SpecContext) {
		gordon = applySample(ctx, "gordon", "operator_v1_gordon.yaml", ns)
		Expect(gordon.GroupVersionKind()).To(Equal(gordonGVK))
		expectGordonRunning(ctx, gordon, 3)
	})

	It("acts in every namespace it watches and in no other", func(ctx SpecContext) {
		inOther := applySample(ctx, "gordon", "operator_v1_gordon.yaml", other)
		expectGordonRunning(ctx, inOther, 3)

		ignored := applySample(ctx, "gordon", "operator_v1_gordon.yaml", unwatched)
		Consistently(func(g Gomega) {
			g.Expect(gordonPods(ctx, g, unwatched, ignored.GetName())).To(BeEmpty())
			g.Expect(conditionStatus(ctx, ignored, "Ready")).To(BeEmpty())
		}).WithContext(ctx).WithTimeout(3 * time.Second).Should(Succeed())
	})

	It("replaces a deleted pod", func(ctx SpecContext) {
		pods := expectGordonRunning(ctx, gordon, 3)
		victim := pods[0]
		Expect(k8sClient.Delete(ctx, &victim)).To(Succeed())
		Eventually(func(g Gomega) {
			live := gordonPods(ctx, g, ns, gordon.GetName())
			g.Expect(live).To(HaveLen(3))
			for _, p := range live {
				g.Expect(p.Name).NotTo(Equal(victim.Name))
			}
		}).WithContext(ctx).Should(Succeed())
		expectGordonRunning(ctx, gordon, 3)
	})

	It("rolls its pods to a changed pod template", func(ctx SpecContext) {
		before := expectGordonRunning(ctx, gordon, 3)
		patch := client.RawPatch("application/merge-patch+json",
			[]byte(`{"spec":{"gordon":{"env":[{"name":"GREETING","value":"hello"}],"rollingUpdate":{"maxSurge":1,"maxUnavailable":0}}}}`))
		Expect(k8sClient.Patch(ctx, gordon, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			pods := gordonPods(ctx, g, ns, gordon.GetName())
			g.Expect(len(pods)).To(BeNumerically("<=", 4), "more pods than replicas + maxSurge")
			g.Expect(pods).To(HaveLen(3))
			for _, p := range pods {
				g.Expect(p.Spec.Containers[0].Env).To(ContainElement(corev1.EnvVar{Name: "GREETING", Value: "hello"}))
				for _, old := range before {
					g.Expect(p.Name).NotTo(Equal(old.Name))
				}
			}
			updated, _, _ := unstructured.NestedInt64(gordonStatus(ctx, g, gordon), "updatedReplicas")
			g.Expect(updated).To(BeEquivalentTo(3))
		}).WithContext(ctx).Should(Succeed())
		expectGordonRunning(ctx, gordon, 3)
	})

	It("scales 3 → 5 → 1 through the scale subresource", func(ctx SpecContext) {
		scaleGordon(ctx, gordon, 5)
		expectGordonRunning(ctx, gordon, 5)
		scaleGordon(ctx, gordon, 1)
		expectGordonRunning(ctx, gordon, 1)
	})

	It("leaves no pods behind when the Gordon is deleted", func(ctx SpecContext) {
		Expect(k8sClient.Delete(ctx, gordon)).To(Succeed())
		Eventually(func(g Gomega) {
			list := &corev1.PodList{}
			g.Expect(k8sClient.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{gordonLabel: gordon.GetName()})).To(Succeed())
			g.Expect(list.Items).To(BeEmpty())
		}).WithContext(ctx).Should(Succeed())
	})
})
