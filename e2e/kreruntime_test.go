//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kreSampleVersion is the name of the sample RuntimeVersion.
const kreSampleVersion = "greeter-v1"

// kreVersionPods lists the pods of the sample RuntimeVersion that are not terminating.
func kreVersionPods(ctx context.Context, g Gomega, namespace string) []corev1.Pod {
	return livePods(ctx, g, namespace, client.MatchingLabels{"kre.konstellation.io/version": kreSampleVersion})
}

var _ = Describe("The kre-runtime operator", Ordered, func() {
	var (
		ns      string
		runtime *unstructured.Unstructured
		version *unstructured.Unstructured
	)

	BeforeAll(func(ctx SpecContext) {
		ns = createNamespace(ctx, "e2e-kre", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
		// As OLM installs it: for its own namespace only.
		startOperator("kre-runtime", []string{"WATCH_NAMESPACE=" + ns})
	})

	It("runs KRE's own Runtime sample, verbatim, as the pods KRE names, and reports it Ready", func(ctx SpecContext) {
		runtime = applySample(ctx, "kre-runtime", "kre_v1alpha1_runtime.yaml", ns)
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"kre.konstellation.io/runtime": "example4"})).To(Succeed())
			names := make([]string, 0, len(pods.Items))
			for _, p := range pods.Items {
				names = append(names, p.Name)
				g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), p.Name)
			}
			g.Expect(names).To(ConsistOf("kre-mongo-0", "kre-nats-0", "kre-nats-1", "kre-minio-0"))
			g.Expect(conditionStatus(ctx, runtime, "Ready")).To(Equal("True"))
			g.Expect(conditionStatus(ctx, runtime, "InlineCredentials")).To(Equal("True"))
		}).WithContext(ctx).Should(Succeed())
		claims := &corev1.PersistentVolumeClaimList{}
		Expect(k8sClient.List(ctx, claims, client.InNamespace(ns))).To(Succeed())
		Expect(claims.Items).To(HaveLen(4), "one volume per replica")
	})

	It("runs a RuntimeVersion's entrypoint and nodes, stops it to no pods and starts it again", func(ctx SpecContext) {
		version = applySample(ctx, "kre-runtime", "kre_v1alpha1_runtimeversion.yaml", ns)
		Eventually(func(g Gomega) {
			g.Expect(kreVersionPods(ctx, g, ns)).To(HaveLen(4))
			g.Expect(conditionStatus(ctx, version, "Ready")).To(Equal("True"))
		}).WithContext(ctx).Should(Succeed())

		stop := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"state":"Stopped"}}`))
		Expect(k8sClient.Patch(ctx, version, stop)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(kreVersionPods(ctx, g, ns)).To(BeEmpty())
		}).WithContext(ctx).Should(Succeed())

		start := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"state":"Started"}}`))
		Expect(k8sClient.Patch(ctx, version, start)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(kreVersionPods(ctx, g, ns)).To(HaveLen(4))
			g.Expect(conditionStatus(ctx, version, "Ready")).To(Equal("True"))
		}).WithContext(ctx).Should(Succeed())
	})

	It("takes what it made with a deleted Runtime, and keeps the volumes (volumeRetention: Retain)", func(ctx SpecContext) {
		Expect(k8sClient.Delete(ctx, version)).To(Succeed())
		Expect(k8sClient.Delete(ctx, runtime)).To(Succeed())
		Eventually(func(g Gomega) {
			sets := &appsv1.StatefulSetList{}
			g.Expect(k8sClient.List(ctx, sets, client.InNamespace(ns))).To(Succeed())
			g.Expect(sets.Items).To(BeEmpty())
			secrets := &corev1.SecretList{}
			g.Expect(k8sClient.List(ctx, secrets, client.InNamespace(ns), client.MatchingLabels{"kre.konstellation.io/runtime": "example4"})).To(Succeed())
			g.Expect(secrets.Items).To(BeEmpty())
			g.Expect(kreVersionPods(ctx, g, ns)).To(BeEmpty())
		}).WithContext(ctx).Should(Succeed())
		claims := &corev1.PersistentVolumeClaimList{}
		Expect(k8sClient.List(ctx, claims, client.InNamespace(ns))).To(Succeed())
		Expect(claims.Items).To(HaveLen(4), "the volumes stay for a Runtime made again")
	})
})
