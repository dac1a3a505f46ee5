//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive // ginkgo's DSL
	. "github.com/onsi/gomega"    //nolint:revive // gomega's DSL
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The faults the robustness scenarios inject into an etcd cluster on the real nodes and into
// the manager that runs it.

// etcdManagerNamespace is where deployOperatorOnRealNode runs the etcd-cluster manager
// (config/default's namespace).
const etcdManagerNamespace = "etcd-cluster-system"

// killEtcdProcess sends SIGKILL to the etcd process in pod, on its real node: the container
// ends as a crash or an OOM kill would end it, and the kubelet starts it again in the same pod.
func killEtcdProcess(pod *corev1.Pod) {
	ids := strings.Fields(crictl(pod.Spec.NodeName, "ps", "--quiet", "--label", "io.kubernetes.pod.uid="+string(pod.UID)))
	Expect(ids).To(HaveLen(1), "the running containers of pod %s", pod.Name)
	pid, err := strconv.Atoi(strings.TrimSpace(crictl(pod.Spec.NodeName, "inspect", "--output", "go-template", "--template", "{{.info.pid}}", ids[0])))
	Expect(err).NotTo(HaveOccurred())
	Expect(pid).To(BeNumerically(">", 1))
	Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed(), "killing etcd (pid %d) in pod %s", pid, pod.Name)
}

// killEtcdManager deletes the etcd-cluster manager's pod with no grace period (its process
// gets SIGKILL, and keeps its leader-election lease until the lease expires), then waits
// until the Deployment's next pod is Ready.
func killEtcdManager(ctx context.Context) {
	running := managerOnRealNode(ctx, etcdManagerNamespace)
	By("killing the manager's pod " + running.Name)
	Expect(k8sClient.Delete(ctx, &running, client.GracePeriodSeconds(0))).To(Succeed())
	Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKeyFromObject(&running), &corev1.Pod{}) }).
		WithContext(ctx).Should(MatchError(ContainSubstring("not found")))
	managerOnRealNode(ctx, etcdManagerNamespace)
}

// dumpForFailure writes, for a failed spec, what explains it into the e2e logs folder: the
// namespace's objects and Events, its pods and volume claims whole (gates, annotations,
// init and main containers' states, claims being deleted), the manager's log and the
// members' (the last 200 lines of each container, and of its run before a restart). A member
// that never starts leaves the stage it stopped at there: its pod made or not, scheduled,
// ungated, its claim bound, its init container done.
func dumpForFailure(ctx context.Context, name, namespace, managerNamespace string) {
	path := filepath.Join(logDir(), fmt.Sprintf("%s-failure-%s.log", name, time.Now().Format("150405")))
	var out bytes.Buffer
	for _, args := range [][]string{
		{"get", "etcdclusters,statefulsets,pods,pvc,events", "-n", namespace, "-o", "wide"},
		{"get", "etcdclusters,pods,pvc", "-n", namespace, "-o", "yaml"},
		{"logs", "-n", managerNamespace, "-l", "control-plane=controller-manager", "--tail=-1", "--timestamps"},
		{"logs", "-n", namespace, "-l", "app=etcd", "--all-containers", "--prefix", "--tail=200", "--timestamps"},
		{"logs", "-n", namespace, "-l", "app=etcd", "--all-containers", "--prefix", "--tail=200", "--timestamps", "--previous"},
	} {
		cmd := exec.CommandContext(context.WithoutCancel(ctx), requiredEnv("E2E_KUBECTL"), args...)
		data, err := cmd.CombinedOutput()
		fmt.Fprintf(&out, "$ kubectl %s (%v)\n%s\n", strings.Join(args, " "), err, data)
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err == nil { //nolint:gosec // a log
		GinkgoWriter.Printf("what the failure left: %s\n", path)
	}
}

// holdScale stops, at admission, every change of the cluster's StatefulSet replicas until the
// function it returns is called: the manager's membership change stops between its step on
// etcd (a member added or removed) and its step on the StatefulSet (the member's pod made or
// deleted), where a manager killed at that moment would leave it.
func holdScale(ctx context.Context, cluster *unstructured.Unstructured) (release func(context.Context)) {
	release = holdAtAdmission(ctx, "robustness-hold-scale-"+cluster.GetNamespace(), cluster.GetNamespace(),
		admissionv1.Update, admissionv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"statefulsets"}},
		fmt.Sprintf("object.metadata.name != %q || object.spec.replicas == oldObject.spec.replicas", cluster.GetName()),
		"the robustness harness holds this StatefulSet's replicas")
	By("checking that a change of the StatefulSet's replicas is refused")
	Eventually(func(g Gomega) {
		sts := etcdStatefulSet(ctx, g, cluster)
		patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, *sts.Spec.Replicas+1)
		err := k8sClient.Patch(ctx, sts, client.RawPatch(types.MergePatchType, []byte(patch)), client.DryRunAll)
		g.Expect(err).To(MatchError(ContainSubstring("holds this StatefulSet's replicas")))
	}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
	return release
}

// holdAtAdmission refuses, with a ValidatingAdmissionPolicy, every operation op on rule's
// resources in namespace for which expression is false, with message, until the function it
// returns is called (or the spec ends).
func holdAtAdmission(ctx context.Context, name, namespace string, op admissionv1.OperationType, rule admissionv1.Rule,
	expression, message string,
) (release func(context.Context)) {
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: new(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{Operations: []admissionv1.OperationType{op}, Rule: rule},
			}}},
			Validations: []admissionv1.Validation{{
				Expression: expression,
				Message:    message,
				// Forbidden, not the default Invalid: the managers take Invalid for a spec that
				// can never be written (terminal until the spec changes), and retry Forbidden.
				Reason: new(metav1.StatusReasonForbidden),
			}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": namespace},
			}},
		},
	}
	Expect(k8sClient.Create(ctx, policy)).To(Succeed())
	Expect(k8sClient.Create(ctx, binding)).To(Succeed())
	release = func(ctx context.Context) {
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, binding))).To(Succeed())
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, policy))).To(Succeed())
	}
	DeferCleanup(release)
	return release
}

// etcdStatefulSet is the cluster's StatefulSet.
func etcdStatefulSet(ctx context.Context, g Gomega, cluster *unstructured.Unstructured) *appsv1.StatefulSet {
	sts := &appsv1.StatefulSet{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(cluster), sts)).To(Succeed())
	return sts
}
