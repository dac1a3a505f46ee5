//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kreFlowRuntime is the message flow's Runtime: NATS on the real node, from the image `make
// images` builds from source; MongoDB and MinIO on kwok nodes, whose upstream images cannot
// be pulled or built here.
func kreFlowRuntime(namespace string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kre.konstellation.io/v1alpha1", "kind": "Runtime",
		"metadata": map[string]any{"name": "example4", "namespace": namespace},
		"spec": map[string]any{"nats_streaming": map[string]any{
			"replicas": int64(1), "image": requiredEnv("E2E_NATS_IMAGE"), "placement": realNodePlacement(),
		}},
	}}
}

var _ = Describe("The kre-runtime operator on the real node", Ordered, func() {
	var (
		ns      string
		version *unstructured.Unstructured
	)

	// predict posts message to the sample's workflow through the entrypoint's Service.
	predict := func(ctx context.Context, message string) (int, string, error) {
		svc := &corev1.Service{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: kreSampleVersion + "-entrypoint"}, svc); err != nil {
			return 0, "", err
		}
		return httpDo(ctx, http.MethodPost, fmt.Sprintf("http://%s/predict?workflow=Greet", svc.Spec.ClusterIP), message)
	}

	// expectStamped posts message until the workflow answers it, stamped by its nodes in order.
	expectStamped := func(ctx context.Context, message string) {
		Eventually(func(g Gomega) {
			code, body, err := predict(ctx, message)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(http.StatusOK), body)
			g.Expect(body).To(Equal(message + " -> prepare -> greet -> stamp"))
		}).WithContext(ctx).Should(Succeed())
	}

	BeforeAll(func(ctx SpecContext) {
		requireRealNode(ctx)
		ns = createNamespace(ctx, "e2e-kre-flow", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
		startOperator("kre-runtime", []string{"WATCH_NAMESPACE=" + ns})
	})

	It("passes a request through a 3-node workflow over NATS, each node stamping it in order", func(ctx SpecContext) {
		Expect(k8sClient.Create(ctx, kreFlowRuntime(ns))).To(Succeed())

		version = readSample("kre-runtime", "kre_v1alpha1_runtimeversion.yaml")
		version.SetNamespace(ns)
		Expect(unstructured.SetNestedField(version.Object, realNodePlacement(), "spec", "placement")).To(Succeed())
		Expect(k8sClient.Create(ctx, version)).To(Succeed())

		By("waiting for NATS on the real node and the version Ready")
		Eventually(func(g Gomega) {
			nats := &corev1.Pod{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kre-nats-0"}, nats)).To(Succeed())
			g.Expect(nats.Spec.NodeName).To(Equal(realNodeName))
			g.Expect(podReady(nats)).To(BeTrue(), "kre-nats-0 Ready")
			g.Expect(conditionStatus(ctx, version, "Ready")).To(Equal("True"))
		}).WithContext(ctx).Should(Succeed())
		for _, p := range kreVersionPods(ctx, Default, ns) {
			Expect(p.Spec.NodeName).To(Equal(realNodeName), p.Name)
		}

		By("posting to the entrypoint's Service")
		expectStamped(ctx, "hello")
	})

	It("stops to no pods and no answer, and answers again once started", func(ctx SpecContext) {
		stop := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"state":"Stopped"}}`))
		Expect(k8sClient.Patch(ctx, version, stop)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(kreVersionPods(ctx, g, ns)).To(BeEmpty())
		}).WithContext(ctx).Should(Succeed())
		code, _, err := predict(ctx, "anyone?")
		Expect(err != nil || code != http.StatusOK).To(BeTrue(), "a stopped version answers nothing")

		start := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"state":"Started"}}`))
		Expect(k8sClient.Patch(ctx, version, start)).To(Succeed())
		expectStamped(ctx, "again")
	})
})
