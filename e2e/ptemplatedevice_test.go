//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

const (
	// ptemplateSample is the name of the example's sample Ptemplate.
	ptemplateSample = "consumer-pod"
	// ptemplateResource is the extended resource the sample's device plugin would advertise.
	ptemplateResource = "example.com/ptemplate"
	// ptemplateLabel names, on each consumer pod, the Ptemplate it is for.
	ptemplateLabel = "ptemplates.pt.example.com/ptemplate"
)

// kmmModuleCRD is ptemplate-device's stand-in for KMM's Module CRD (KMM is not installed here).
var kmmModuleCRD = filepath.Join("..", "operators", "ptemplate-device", "test", "kmm-module-crd.yaml")

// ptemplateWorker makes a kwok node that matches the sample's selector and has maxdev (5)
// devices of the sample's resource, as the device plugin would advertise them; it is deleted
// when the spec ends.
func ptemplateWorker(ctx context.Context, name string) *corev1.Node {
	resources := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"),
		corev1.ResourcePods: resource.MustParse("110"), ptemplateResource: resource.MustParse("5")}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
		Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
		Labels:      map[string]string{"kubernetes.io/hostname": name, "node-role.kubernetes.io/worker": "worker", "type": "kwok"}},
		Status: corev1.NodeStatus{Capacity: resources, Allocatable: resources}}
	Expect(k8sClient.Create(ctx, node)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, node))).To(Succeed()) })
	return node
}

// setModuleLoaded plays KMM: it labels node as having the module of the sample Ptemplate in
// ns loaded, or removes the label.
func setModuleLoaded(ctx context.Context, node, ns string, loaded bool) {
	label := fmt.Sprintf("kmm.node.kubernetes.io/%s.%s.ready", ns, ptemplateSample)
	value := `""`
	if !loaded {
		value = "null"
	}
	patch := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"metadata":{"labels":{%q:%s}}}`, label, value))
	Expect(k8sClient.Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, patch)).To(Succeed())
}

// consumerNodes are the nodes the sample's live consumer pods run on.
func consumerNodes(ctx context.Context, g Gomega, ns string) []string {
	pods := livePods(ctx, g, ns, client.MatchingLabels{ptemplateLabel: ptemplateSample})
	nodes := make([]string, 0, len(pods))
	for _, p := range pods {
		nodes = append(nodes, p.Spec.NodeName)
	}
	return nodes
}

var _ = Describe("The ptemplate-device operator", Ordered, func() {
	var (
		ns        string
		ptemplate *unstructured.Unstructured
		workers   []string
	)

	BeforeAll(func(ctx SpecContext) {
		Expect(meta.IsNoMatchError(k8sClient.List(ctx, kmmModules()))).To(BeTrue(),
			"KMM's Module CRD is installed by this container only, once it checked the cluster without it")
		ns = createNamespace(ctx, "e2e-ptemplate", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
		for i := range 3 {
			workers = append(workers, ptemplateWorker(ctx, fmt.Sprintf("%s-worker-%d", ns, i)).Name)
		}
		startOperator("ptemplate-device", []string{"WATCH_NAMESPACE=" + ns})
	})

	It("waits for KMM with KMMNotInstalled, and makes the Module once its CRD appears, without a restart", func(ctx SpecContext) {
		ptemplate = applySample(ctx, "ptemplate-device", "ptemplates_v1alpha_ptemplate.yaml", ns)
		Eventually(func() string { return readyReason(ctx, ptemplate) }).WithContext(ctx).Should(Equal("KMMNotInstalled"))

		By("installing the Module CRD")
		_, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{kmmModuleCRD}, ErrorIfPathMissing: true})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			params := moduleParameters(ctx, g, ns)
			g.Expect(params).To(Equal([]string{"max_dev=5", "default_msg=ptemplate"}))
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: ptemplateSample + "-consumer"}, &appsv1.DaemonSet{})).To(Succeed())
			g.Expect(readyReason(ctx, ptemplate)).To(Equal("ModuleNotLoaded"))
		}).WithContext(ctx).Should(Succeed())
	})

	It("runs consumers exactly where KMM reports the module loaded, and follows the label", func(ctx SpecContext) {
		setModuleLoaded(ctx, workers[0], ns, true)
		setModuleLoaded(ctx, workers[2], ns, true)
		Eventually(func(g Gomega) {
			g.Expect(consumerNodes(ctx, g, ns)).To(ConsistOf(workers[0], workers[2]))
			g.Expect(conditionStatus(ctx, ptemplate, "Ready")).To(Equal("True"))
			status := ptemplateStatus(ctx, g, ptemplate)
			g.Expect(status["consumers"]).To(HaveLen(2))
			g.Expect(status["readyConsumers"]).To(BeEquivalentTo(2))
			g.Expect(status["nodes"]).To(ConsistOf(workers[0], workers[2]))
		}).WithContext(ctx).Should(Succeed())

		By("KMM unloading the module from " + workers[0])
		setModuleLoaded(ctx, workers[0], ns, false)
		Eventually(func(g Gomega) {
			g.Expect(consumerNodes(ctx, g, ns)).To(ConsistOf(workers[2]))
			g.Expect(ptemplateStatus(ctx, g, ptemplate)["nodes"]).To(ConsistOf(workers[2]))
		}).WithContext(ctx).Should(Succeed())
	})

	It("passes a changed maxdev to the Module's parameters", func(ctx SpecContext) {
		patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"maxdev":4}}`))
		Expect(k8sClient.Patch(ctx, ptemplate, patch)).To(Succeed())
		Eventually(func(g Gomega) {
			params := moduleParameters(ctx, g, ns)
			g.Expect(params).To(Equal([]string{"max_dev=4", "default_msg=ptemplate"}))
		}).WithContext(ctx).Should(Succeed())
	})

	It("takes its Module and consumers with a deleted Ptemplate", func(ctx SpecContext) {
		Expect(k8sClient.Delete(ctx, ptemplate)).To(Succeed())
		Eventually(func(g Gomega) {
			modules := kmmModules()
			g.Expect(k8sClient.List(ctx, modules, client.InNamespace(ns))).To(Succeed())
			g.Expect(modules.Items).To(BeEmpty())
			sets := &appsv1.DaemonSetList{}
			g.Expect(k8sClient.List(ctx, sets, client.InNamespace(ns))).To(Succeed())
			g.Expect(sets.Items).To(BeEmpty())
			g.Expect(consumerNodes(ctx, g, ns)).To(BeEmpty())
		}).WithContext(ctx).Should(Succeed())
	})
})

// ptemplateStatus is the status of a Ptemplate, as read now.
func ptemplateStatus(ctx context.Context, g Gomega, pt *unstructured.Unstructured) map[string]any {
	got := pt.DeepCopy()
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pt), got)).To(Succeed())
	status, _, _ := unstructured.NestedMap(got.Object, "status")
	return status
}

// expectWaitingForKMM waits until a Ptemplate reconciled where KMM may or may not be installed
// says so: without KMM's CRD it waits for KMM; with it (another spec installed the stand-in) it
// makes the Module and waits for a node with the module loaded.
func expectWaitingForKMM(ctx context.Context, pt *unstructured.Unstructured) {
	Eventually(func() string { return readyReason(ctx, pt) }).WithContext(ctx).Should(BeElementOf("KMMNotInstalled", "ModuleNotLoaded"))
}

// kmmModules is an empty list of KMM Modules.
func kmmModules() *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("kmm.sigs.x-k8s.io/v1beta1")
	list.SetKind("ModuleList")
	return list
}

// kmmModule is an empty KMM Module.
func kmmModule() *unstructured.Unstructured {
	module := &unstructured.Unstructured{}
	module.SetAPIVersion("kmm.sigs.x-k8s.io/v1beta1")
	module.SetKind("Module")
	return module
}

// moduleParameters are the modprobe parameters of the sample's Module in ns.
func moduleParameters(ctx context.Context, g Gomega, ns string) []string {
	module := kmmModule()
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: ptemplateSample}, module)).To(Succeed())
	params, _, _ := unstructured.NestedStringSlice(module.Object, "spec", "moduleLoader", "container", "modprobe", "parameters")
	return params
}
