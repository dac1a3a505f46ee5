package ptemplate

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	v1alpha "github.com/quintet-operators/quintet/operators/ptemplate-device/api/v1alpha"
	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/ensure"
	"github.com/quintet-operators/quintet/shared/testenv"
)

const (
	timeout = 20 * time.Second
	tick    = 100 * time.Millisecond
	// sampleName is the name of the example's sample Ptemplate.
	sampleName = "consumer-pod"
)

var kmmCRD = filepath.Join("..", "..", "..", "test", "kmm-module-crd.yaml")

func newNamespace(t *testing.T) string { return env.NewNamespace(t, "ptemplate-test") }

var installKMMOnce sync.Once

// installKMM installs the stand-in for KMM's Module CRD, once for the package.
func installKMM(t *testing.T) {
	t.Helper()
	installKMMOnce.Do(func() {
		if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: []string{kmmCRD}, ErrorIfPathMissing: true}); err != nil {
			t.Fatal(err)
		}
	})
}

// startSample installs KMM's CRD, applies the example's sample in a new namespace and waits
// for its Module and DaemonSet, which it reports with no node scheduled.
func startSample(t *testing.T) (string, *unstructured.Unstructured, *appsv1.DaemonSet) {
	t.Helper()
	installKMM(t)
	ns := newNamespace(t)
	applySample(t, ns)
	m, ds := children(t, ns)
	markScheduled(NewWithT(t), ds, 0)
	return ns, m, ds
}

// applySample creates the example's sample in ns (strict field validation).
func applySample(t *testing.T, ns string) {
	t.Helper()
	env.ApplyFile(t, filepath.Join("..", "..", "..", "config", "samples", "ptemplates_v1alpha_ptemplate.yaml"), ns)
}

// readyReason is the reason of pt's Ready condition, which must be there.
func readyReason(g Gomega, pt *v1alpha.Ptemplate) string {
	ready := conditions.Get(pt, conditions.ReadyCondition)
	g.Expect(ready).NotTo(BeNil(), "no Ready condition yet")
	return ready.Reason
}

func getPtemplate(g Gomega, ns string) *v1alpha.Ptemplate {
	pt := &v1alpha.Ptemplate{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: sampleName}, pt)).To(Succeed())
	return pt
}

// children waits for the sample's Module and consumer DaemonSet and returns them.
func children(t *testing.T, ns string) (*unstructured.Unstructured, *appsv1.DaemonSet) {
	t.Helper()
	m, ds := newModule(), &appsv1.DaemonSet{}
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: sampleName}, m)).To(Succeed())
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: sampleName + "-consumer"}, ds)).To(Succeed())
	}, timeout, tick).Should(Succeed())
	return m, ds
}

// The first test of the package: KMM's CRD is not installed yet.
func TestAPtemplateWaitsForKMMThenMakesItsModuleAndConsumers(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	modules := &unstructured.UnstructuredList{}
	modules.SetGroupVersionKind(moduleGVK.GroupVersion().WithKind("ModuleList"))
	g.Expect(meta.IsNoMatchError(env.Client.List(ctx, modules))).To(BeTrue(),
		"this test must run first, before installKMM: it checks a cluster without KMM")

	ns := newNamespace(t)
	applySample(t, ns)
	g.Eventually(func(g Gomega) {
		ready := conditions.Get(getPtemplate(g, ns), conditions.ReadyCondition)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Reason).To(Equal(v1alpha.ReasonKMMNotInstalled))
		g.Expect(ready.Message).To(ContainSubstring("modules.kmm.sigs.x-k8s.io"))
	}, timeout, tick).Should(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: sampleName + "-consumer"}, &appsv1.DaemonSet{})).NotTo(Succeed(),
		"nothing is made while KMM is missing")

	// KMM arrives; the manager, started without it, proceeds (within kmmRecheck).
	installKMM(t)
	m, ds := children(t, ns)
	spec := m.Object["spec"].(map[string]any)
	g.Expect(spec["selector"]).To(Equal(map[string]any{"node-role.kubernetes.io/worker": "worker"}))
	g.Expect(spec["imageRepoSecret"]).To(Equal(map[string]any{"name": "pt-char-pull-secret"}))
	container := spec["moduleLoader"].(map[string]any)["container"].(map[string]any)
	g.Expect(container["modprobe"]).To(Equal(map[string]any{"moduleName": "ptemplate_char_dev", "dirName": "/opt",
		"parameters": []any{"max_dev=5", "default_msg=ptemplate"}}))
	g.Expect(container["kernelMappings"]).To(Equal([]any{map[string]any{"regexp": "^.+$",
		"containerImage": "quay.io/chrisp262/pt-char-dev:${KERNEL_FULL_VERSION}"}}))
	g.Expect(spec["devicePlugin"]).To(Equal(map[string]any{"container": map[string]any{"image": v1alpha.DefaultDevicePluginImage}}))

	pod := ds.Spec.Template.Spec
	g.Expect(pod.NodeSelector).To(Equal(map[string]string{"node-role.kubernetes.io/worker": "worker",
		"kmm.node.kubernetes.io/" + ns + ".consumer-pod.ready": ""}))
	g.Expect(pod.ImagePullSecrets).To(Equal([]corev1.LocalObjectReference{{Name: "pt-char-pull-secret"}}))
	c := pod.Containers[0]
	g.Expect(c.Image).To(Equal("quay.io/chrisp262/pt-device-plugin:consumer-latest"))
	g.Expect(c.Resources.Limits).To(Equal(corev1.ResourceList{"example.com/ptemplate": resource.MustParse("2")}))
	g.Expect(c.SecurityContext.Privileged).To(BeNil())
	g.Expect(pod.Volumes).To(BeEmpty(), "no hostPath: the device plugin hands out the devices")
	g.Expect(pod.SecurityContext.RunAsNonRoot).To(Equal(ptr.To(true)))
	g.Eventually(func(g Gomega) {
		g.Expect(readyReason(g, getPtemplate(g, ns))).To(Equal(v1alpha.ReasonConsumersNotReady))
	}, timeout, tick).Should(Succeed())
}

// The Module the operator writes fits KMM's Module CRD exactly: strict field validation
// refuses any field KMM's v1beta1 does not have, and the API server stores it unchanged
// apart from its defaults, which the operator sets too.
func TestTheModuleShapeFitsKMMsModuleCRD(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	installKMM(t)
	ns := newNamespace(t)
	pt := &v1alpha.Ptemplate{ObjectMeta: metav1.ObjectMeta{Name: "shape", Namespace: ns}}
	pt.Spec = v1alpha.PtemplateSpec{MaxDev: 3, DefaultMsg: "hi", RequiredDevices: 1, Selector: map[string]v1alpha.LabelValue{"a": "b"},
		ImageRepoSecret: &corev1.LocalObjectReference{Name: "pull"}, DevicePluginImage: v1alpha.DefaultDevicePluginImage, ResourceName: v1alpha.DefaultResourceName,
		KernelModule: v1alpha.KernelModule{Name: "m", Image: "r/m:${KERNEL_FULL_VERSION}", KernelRegexp: "^6\\..*$"}}
	desired := module(pt, map[string]string{"a": "b"})
	g.Expect(env.Client.Create(ctx, desired.DeepCopy(), client.FieldValidation(metav1.FieldValidationStrict))).To(Succeed())
	stored := newModule()
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(desired), stored)).To(Succeed())
	g.Expect(stored.Object["spec"]).To(Equal(desired.Object["spec"]))

	wrong := desired.DeepCopy()
	g.Expect(unstructured.SetNestedField(wrong.Object, "x", "spec", "moduleLoader", "container", "modprobe", "modulename")).To(Succeed())
	wrong.SetName("wrong")
	g.Expect(env.Client.Create(ctx, wrong, client.FieldValidation(metav1.FieldValidationStrict))).To(
		MatchError(ContainSubstring(`unknown field "spec.moduleLoader.container.modprobe.modulename"`)), "the stand-in CRD is strict")
}

func TestAPtemplateFollowsItsSpecRestoresDriftAndWritesNothingInSteadyState(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, m, ds := startSample(t)
	g.Eventually(func(g Gomega) {
		g.Expect(readyReason(g, getPtemplate(g, ns))).To(Equal(v1alpha.ReasonModuleNotLoaded))
	}, timeout, tick).Should(Succeed())

	// The Module and the DaemonSet, created in one pass, are one Normal Event on the Ptemplate.
	owner := getPtemplate(g, ns)
	g.Expect(events.Notes(owner, ensure.EventCreated)).To(Equal([]string{"Created Module " + m.GetName() + ", DaemonSet " + ds.Name}))

	// Steady state: passes that change nothing write nothing, log nothing, record nothing.
	time.Sleep(time.Second)
	before, mark := writes.WritesIn(ns), logs.Len()
	for i := range 5 {
		patch := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"metadata":{"labels":{"poke":"%d"}}}`, i))
		g.Expect(env.Client.Patch(ctx, getPtemplate(g, ns), patch)).To(Succeed())
	}
	time.Sleep(2 * time.Second)
	g.Expect(writes.WritesIn(ns) - before).To(BeZero())
	g.Expect(logs.Since(mark, ns)).To(BeEmpty())
	g.Expect(events.Emitted(owner, ensure.EventCreated) + events.Emitted(owner, ensure.EventUpdated)).To(Equal(1))

	// The manager's client reads the Module from its cache (no request to the API server),
	// which holds it without its spec.
	cached := newModule()
	g.Expect(writes.Get(ctx, client.ObjectKeyFromObject(m), cached)).To(Succeed())
	g.Expect(cached.Object).NotTo(HaveKey("spec"))
	g.Expect(cached.GetAnnotations()).To(HaveKey(ensure.AppliedSpecAnnotation))

	// Drift on either child is corrected, each correction an Event.
	g.Expect(unstructured.SetNestedStringSlice(m.Object, []string{"max_dev=1"}, "spec", "moduleLoader", "container", "modprobe", "parameters")).To(Succeed())
	g.Expect(env.Client.Update(ctx, m)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, ds)).To(Succeed())
	g.Eventually(func(g Gomega) {
		m, again := newModule(), &appsv1.DaemonSet{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: sampleName}, m)).To(Succeed())
		params, _, _ := unstructured.NestedStringSlice(m.Object, "spec", "moduleLoader", "container", "modprobe", "parameters")
		g.Expect(params).To(Equal([]string{"max_dev=5", "default_msg=ptemplate"}))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(ds), again)).To(Succeed())
		g.Expect(again.UID).NotTo(Equal(ds.UID))
		g.Expect(events.Notes(owner, ensure.EventCreated)).To(HaveLen(2))
		g.Expect(events.Notes(owner, ensure.EventCreated)[1]).To(Equal("Created DaemonSet " + ds.Name))
		g.Expect(events.Notes(owner, ensure.EventUpdated)).To(Equal([]string{"Updated Module " + m.GetName()}))
	}, timeout, tick).Should(Succeed())

	// A spec change follows: maxdev into the module's parameters, requiredDevices into the
	// consumers' limits; a removed pull Secret leaves both.
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"maxdev":8,"requiredDevices":3,"imageRepoSecret":null}}`))
	g.Expect(env.Client.Patch(ctx, getPtemplate(g, ns), patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		m, ds := newModule(), &appsv1.DaemonSet{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: sampleName}, m)).To(Succeed())
		params, _, _ := unstructured.NestedStringSlice(m.Object, "spec", "moduleLoader", "container", "modprobe", "parameters")
		g.Expect(params).To(Equal([]string{"max_dev=8", "default_msg=ptemplate"}))
		g.Expect(m.Object["spec"]).NotTo(HaveKey("imageRepoSecret"))
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: sampleName + "-consumer"}, ds)).To(Succeed())
		g.Expect(ds.Spec.Template.Spec.Containers[0].Resources.Limits).To(Equal(corev1.ResourceList{"example.com/ptemplate": resource.MustParse("3")}))
		g.Expect(ds.Spec.Template.Spec.ImagePullSecrets).To(BeEmpty())
	}, timeout, tick).Should(Succeed())
}

// markScheduled reports ds's pods as the DaemonSet controller would: n scheduled, all
// ready, on the current spec. envtest runs no controller.
func markScheduled(g Gomega, ds *appsv1.DaemonSet, n int32) {
	ctx := context.Background()
	g.Eventually(func() error {
		current := &appsv1.DaemonSet{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ds), current); err != nil {
			return err
		}
		current.Status = appsv1.DaemonSetStatus{ObservedGeneration: current.Generation, DesiredNumberScheduled: n,
			CurrentNumberScheduled: n, UpdatedNumberScheduled: n, NumberReady: n, NumberAvailable: n}
		return env.Client.Status().Update(ctx, current)
	}, timeout, tick).Should(Succeed())
}

func TestTheStatusFollowsTheNodesWhereKMMLoadedTheModule(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, _, ds := startSample(t)

	// KMM labels a node where it loaded the module; the DaemonSet controller runs a consumer.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-" + ns, Labels: map[string]string{
		"node-role.kubernetes.io/worker": "worker", ModuleReadyLabel(ns, sampleName): ""}}}
	g.Expect(env.Client.Create(ctx, node)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, node) })
	consumer := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: sampleName + "-consumer-abcde", Namespace: ns, Labels: objectLabels(getPtemplate(g, ns))},
		Spec: corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "consumer", Image: "c:1"}}}}
	g.Expect(env.Client.Create(ctx, consumer)).To(Succeed())
	consumer.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	g.Expect(env.Client.Status().Update(ctx, consumer)).To(Succeed())
	markScheduled(g, ds, 1)
	g.Eventually(func(g Gomega) {
		pt := getPtemplate(g, ns)
		g.Expect(pt.Status.Nodes).To(Equal([]string{node.Name}))
		g.Expect(pt.Status.Consumers).To(Equal([]string{consumer.Name}))
		g.Expect(pt.Status.ReadyConsumers).To(BeEquivalentTo(1))
		g.Expect(conditions.IsTrue(pt, conditions.ReadyCondition)).To(BeTrue())
		for _, name := range ptemplateMetrics {
			g.Expect(gauge(name, ns, sampleName)(g)).To(BeEquivalentTo(1), name)
		}
	}, timeout, tick).Should(Succeed())

	// KMM unloads it: the label goes, and the node with it (the node watch sees the label).
	delete(node.Labels, ModuleReadyLabel(ns, sampleName))
	g.Expect(env.Client.Update(ctx, node)).To(Succeed())
	g.Eventually(func(g Gomega) {
		pt := getPtemplate(g, ns)
		g.Expect(pt.Status.Nodes).To(BeEmpty())
		g.Expect(readyReason(g, pt)).To(Equal(v1alpha.ReasonModuleNotLoaded))
		g.Expect(gauge("quintet_ptemplate_module_ready", ns, sampleName)(g)).To(BeZero())
		g.Expect(gauge("quintet_ptemplate_module_nodes", ns, sampleName)(g)).To(BeZero())
	}, timeout, tick).Should(Succeed())
}

// An update of a DaemonSet the operator does not own reconciles no Ptemplate.
func TestAnUnrelatedDaemonSetReconcilesNothing(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, _, ds := startSample(t)
	time.Sleep(time.Second)

	other := ds.DeepCopy()
	other.ObjectMeta = metav1.ObjectMeta{Name: "unrelated", Namespace: ns, Labels: map[string]string{"app": "unrelated"}}
	other.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "unrelated"}}
	other.Spec.Template.Labels = map[string]string{"app": "unrelated"}
	before := reconciles(g)
	g.Expect(env.Client.Create(ctx, other)).To(Succeed())
	for i := range 3 {
		other.Labels["round"] = fmt.Sprint(i)
		g.Expect(env.Client.Update(ctx, other)).To(Succeed())
	}
	time.Sleep(2 * time.Second)
	g.Expect(reconciles(g)).To(Equal(before), "an unrelated DaemonSet woke the Ptemplate controller")
}

// reconciles is how many passes the Ptemplate controller has made (controller-runtime's
// controller_runtime_reconcile_total).
func reconciles(g Gomega) float64 {
	n, err := testenv.Reconciles("ptemplate")
	g.Expect(err).NotTo(HaveOccurred())
	return n
}

func TestAdmissionRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	valid := func() map[string]any {
		return map[string]any{"maxdev": int64(5), "requiredDevices": int64(2), "consumerimage": "c:1", "selector": map[string]any{"a": "b"}}
	}
	tests := []struct {
		name   string
		change func(spec map[string]any)
		want   string
	}{
		{"valid", func(map[string]any) {}, ""},
		{"more devices than the module makes", func(s map[string]any) { s["requiredDevices"] = int64(6) },
			"spec.requiredDevices: Invalid value: requiredDevices cannot exceed maxdev"},
		{"no device", func(s map[string]any) { s["requiredDevices"] = int64(0) }, "spec.requiredDevices: Invalid value: 0"},
		{"no maxdev", func(s map[string]any) { s["maxdev"] = int64(0) }, "spec.maxdev: Invalid value: 0"},
		{"an untagged consumer image", func(s map[string]any) { s["consumerimage"] = "registry:5000/consumer" },
			`spec.consumerimage: Invalid value: "registry:5000/consumer": consumerimage must carry a tag or a digest`},
		{"an untagged device plugin image", func(s map[string]any) { s["devicePluginImage"] = "plugin" },
			`spec.devicePluginImage: Invalid value: "plugin": devicePluginImage must carry a tag or a digest`},
		{"an untagged module image", func(s map[string]any) { s["kernelModule"] = map[string]any{"image": "kmod"} },
			`spec.kernelModule.image: Invalid value: "kmod": kernelModule.image must carry a tag`},
		{"an empty selector", func(s map[string]any) { s["selector"] = map[string]any{} },
			"spec.selector: Invalid value: selector must name at least one node label"},
		{"no selector", func(s map[string]any) { delete(s, "selector") }, "spec.selector: Required value"},
		{"a selector value with a space", func(s map[string]any) {
			s["selector"] = map[string]any{"node-role.kubernetes.io/worker": "worker node"}
		},
			"spec.selector: Invalid value: selector values must be label values"},
		{"a selector value of 64 characters", func(s map[string]any) { s["selector"] = map[string]any{"a": strings.Repeat("v", 64)} },
			"spec.selector.a: Too long: may not be more than 63 bytes"},
		{"a selector key with a space", func(s map[string]any) { s["selector"] = map[string]any{"worker node": "true"} },
			"spec.selector: Invalid value: selector keys must be label keys"},
		{"a selector key with an empty prefix", func(s map[string]any) { s["selector"] = map[string]any{"/worker": "true"} },
			"spec.selector: Invalid value: selector keys must be label keys"},
		{"a selector of a prefixed key and an empty value", func(s map[string]any) {
			s["selector"] = map[string]any{"node-role.kubernetes.io/worker": "", "feature.node.kubernetes.io/pci-0300_1d0f.present": "true"}
		}, ""},
		{"no consumer image", func(s map[string]any) { delete(s, "consumerimage") }, "spec.consumerimage: Required value"},
		{"a message with a space", func(s map[string]any) { s["defaultmsg"] = "hello world" },
			`spec.defaultmsg: Invalid value: "hello world": defaultmsg is a kernel module parameter`},
		{"a message with a quote", func(s map[string]any) { s["defaultmsg"] = `a"b` }, "spec.defaultmsg: Invalid value"},
		{"a module name with a space", func(s map[string]any) { s["kernelModule"] = map[string]any{"name": "a b"} }, "spec.kernelModule.name: Invalid value"},
		{"a resource in kubernetes.io", func(s map[string]any) { s["resourceName"] = "kubernetes.io/devices" },
			`spec.resourceName: Invalid value: "kubernetes.io/devices": resourceName must not be in the kubernetes.io domain`},
		{"a resource without a domain", func(s map[string]any) { s["resourceName"] = "devices" },
			`spec.resourceName: Invalid value: "devices": resourceName must be an extended resource name`},
		{"an unknown field", func(s map[string]any) { s["maxDevices"] = int64(3) }, `unknown field "spec.maxDevices"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := valid()
			tt.change(spec)
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": v1alpha.GroupVersion.String(), "kind": "Ptemplate",
				"metadata": map[string]any{"generateName": "bad-", "namespace": ns}, "spec": spec,
			}}
			err := env.Client.Create(ctx, u, client.FieldValidation(metav1.FieldValidationStrict))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("a valid Ptemplate was refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
	long := &v1alpha.Ptemplate{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("n", 41), Namespace: ns}}
	long.Spec = v1alpha.PtemplateSpec{ConsumerImage: "c:1", Selector: map[string]v1alpha.LabelValue{"a": "b"}}
	NewWithT(t).Expect(env.Client.Create(ctx, long)).To(MatchError(ContainSubstring("metadata.name is at most 40 characters")))
}

// A Ptemplate asking for a module the policy does not allow gets no Module and no consumers,
// and one that was allowed keeps its Module as it was when its spec turns to such a module.
func TestAPtemplateAskingForAModuleOutsideThePolicyWritesNothing(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	installKMM(t)
	ns := newNamespace(t)
	pt := &v1alpha.Ptemplate{ObjectMeta: metav1.ObjectMeta{Name: "rootkit", Namespace: ns}, Spec: v1alpha.PtemplateSpec{
		ConsumerImage: "c:1", Selector: map[string]v1alpha.LabelValue{"a": "b"},
		KernelModule: v1alpha.KernelModule{Name: "gpu", Image: "quay.io/attacker/gpu:${KERNEL_FULL_VERSION}"}}}
	g.Expect(env.Client.Create(ctx, pt)).To(Succeed())
	refused := func(g Gomega, image string) {
		got := &v1alpha.Ptemplate{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pt), got)).To(Succeed())
		g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		for _, c := range []string{conditions.ReadyCondition, conditions.DegradedCondition} {
			cond := conditions.Get(got, c)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Reason).To(Equal(v1alpha.ReasonModuleNotAllowed))
			g.Expect(cond.Message).To(HavePrefix("kernelModule.image " + image + " is not from a repository allowed for gpu (registry.example.com/kmods/*)"))
		}
	}
	g.Eventually(func(g Gomega) { refused(g, "quay.io/attacker/gpu:${KERNEL_FULL_VERSION}") }, timeout, tick).Should(Succeed())
	g.Eventually(func() int { return events.Emitted(pt, v1alpha.ReasonModuleNotAllowed) }, timeout, tick).Should(BeNumerically(">=", 1), "an Event says it too")
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rootkit"}, newModule())).To(MatchError(ContainSubstring("not found")))
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rootkit-consumer"}, &appsv1.DaemonSet{})).To(MatchError(ContainSubstring("not found")))

	allowedImage := "registry.example.com/kmods/gpu:${KERNEL_FULL_VERSION}"
	patch := func(image string) {
		p := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"spec":{"kernelModule":{"image":%q}}}`, image))
		g.Expect(env.Client.Patch(ctx, pt, p)).To(Succeed())
	}
	patch(allowedImage)
	m := newModule()
	g.Eventually(func() error { return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rootkit"}, m) }, timeout, tick).Should(Succeed())
	loaded := func() any {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rootkit"}, m)).To(Succeed())
		images, _, _ := unstructured.NestedSlice(m.Object, "spec", "moduleLoader", "container", "kernelMappings")
		return images[0].(map[string]any)["containerImage"]
	}
	g.Expect(loaded()).To(Equal(allowedImage))

	patch("quay.io/attacker/gpu:2")
	g.Eventually(func(g Gomega) { refused(g, "quay.io/attacker/gpu:2") }, timeout, tick).Should(Succeed())
	g.Consistently(loaded, time.Second, tick).Should(Equal(allowedImage), "the Module stays as it was allowed")
}
