//go:build e2e

package e2e

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The real nodes of the local cluster, as hack/localcluster sets them up: quintet-node-1,
// quintet-node-2, ... (REAL_NODES of them), each labelled and tainted realNodeLabel
// (placement_test.go).
const (
	realNodePrefix = "quintet-node-"
	agentPort      = 8080
)

// listRealNodes lists the names of the nodes labelled realNodeLabel=true, by their number.
func listRealNodes(ctx context.Context) ([]string, error) {
	nodes := &corev1.NodeList{}
	if err := k8sClient.List(ctx, nodes, client.MatchingLabels{realNodeLabel: "true"}); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(nodes.Items))
	for _, n := range nodes.Items {
		names = append(names, n.Name)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b)) })
	return names, nil
}

// realNodeNames is listRealNodes for a spec that needs the real nodes: it fails without one.
func realNodeNames(ctx context.Context) []string {
	names, err := listRealNodes(ctx)
	Expect(err).NotTo(HaveOccurred())
	Expect(names).NotTo(BeEmpty(), "no node is labelled %s=true", realNodeLabel)
	return names
}

// requireRealNode skips the specs when the cluster has no real node, unless REAL_NODE is
// required, when it fails them.
func requireRealNode(ctx context.Context) {
	names, err := listRealNodes(ctx)
	if err == nil && len(names) == 0 {
		err = errors.New("no node is labelled " + realNodeLabel + "=true")
	}
	if err != nil && os.Getenv("REAL_NODE") != "required" {
		Skip("the local cluster runs without a real node (see `make cluster-up`'s output); REAL_NODE=required makes this a failure")
	}
	Expect(err).NotTo(HaveOccurred(), "REAL_NODE=required but the cluster has no real node")
}

// beARealNode matches the name of a real node (any of them), not of a kwok node: what a pod's
// spec.nodeName is once a real node runs it.
func beARealNode() types.GomegaMatcher {
	return HavePrefix(realNodePrefix)
}

// realNodeDir is where a real node keeps its configuration and state (its disk) on this host.
func realNodeDir(node string, parts ...string) string {
	Expect(node).To(beARealNode())
	return filepath.Join(append([]string{requiredEnv("E2E_LOCAL_DIR"), "node", node}, parts...)...)
}

// hostAddress is the address on this host that the real nodes share: the API server, CoreDNS
// and kube-proxy listen on it, so a NodePort answers there. It is the API server's address in
// the kubeconfig.
func hostAddress() string {
	u, _, err := rest.DefaultServerUrlFor(cfg)
	Expect(err).NotTo(HaveOccurred())
	Expect(u.Hostname()).NotTo(BeEmpty(), "the API server's address %s", cfg.Host)
	return u.Hostname()
}

// realNodeAnnotations make the PodNodeSelector and PodTolerationRestriction admission
// plugins place every pod of a namespace on a real node, also pods that others create.
func realNodeAnnotations() map[string]string {
	toleration, err := json.Marshal([]corev1.Toleration{{
		Key: realNodeLabel, Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule,
	}})
	Expect(err).NotTo(HaveOccurred())
	return map[string]string{
		"scheduler.alpha.kubernetes.io/node-selector":      realNodeLabel + "=true",
		"scheduler.alpha.kubernetes.io/defaultTolerations": string(toleration),
	}
}

// realNodeNamespace makes a restricted namespace whose pods all land on the real nodes.
func realNodeNamespace(ctx context.Context, prefix string) string {
	return realNodeNamespaceAt(ctx, prefix, "restricted")
}

// realNodeNamespaceAt makes a namespace enforcing the Pod Security level whose pods all land
// on the real nodes.
func realNodeNamespaceAt(ctx context.Context, prefix, level string) string {
	return createAnnotatedNamespace(ctx, prefix, map[string]string{"pod-security.kubernetes.io/enforce": level}, realNodeAnnotations())
}

// agentPodSpec runs the e2e agent image (built by `make images`, never pulled) as a
// restricted pod.
func agentPodSpec(args ...string) corev1.PodSpec {
	spec := restrictedPodSpec()
	c := &spec.Containers[0]
	c.Image = requiredEnv("E2E_AGENT_IMAGE")
	c.ImagePullPolicy = corev1.PullNever
	c.Args = args
	c.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: agentPort}}
	c.ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
		PeriodSeconds: 1,
	}
	return spec
}

func requiredEnv(name string) string {
	v := os.Getenv(name)
	Expect(v).NotTo(BeEmpty(), "%s is unset: run e2e through `make e2e`", name)
	return v
}

// httpGet fetches url from this host and returns the status code and body.
func httpGet(ctx context.Context, url string) (int, string, error) {
	return httpDo(ctx, http.MethodGet, url, "")
}

// httpDo sends a request with body from this host and returns the status code and body.
func httpDo(ctx context.Context, method, url, body string) (int, string, error) {
	code, answer, _, err := httpDoHeader(ctx, method, url, body)
	return code, answer, err
}

// httpDoHeader is httpDo, with the answer's header.
func httpDoHeader(ctx context.Context, method, url, body string) (int, string, http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return 0, "", nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	answer, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(answer), resp.Header, err
}

// agentURL is the agent's URL on a pod's IP.
func agentURL(pod *corev1.Pod, path string) string {
	return fmt.Sprintf("http://%s:%d%s", pod.Status.PodIP, agentPort, path)
}

func expectAgent(ctx context.Context, pod *corev1.Pod, path string, code int, body types.GomegaMatcher) {
	Eventually(func(g Gomega) {
		got, text, err := httpGet(ctx, agentURL(pod, path))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(code), text)
		g.Expect(text).To(body)
	}).WithContext(ctx).WithTimeout(30*time.Second).Should(Succeed(), "GET %s on pod %s", path, pod.Name)
}

// runningAgentPod creates a bare agent pod and waits until it is Ready on a real node.
func runningAgentPod(ctx context.Context, namespace string) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: namespace}, Spec: agentPodSpec()}
	Expect(k8sClient.Create(ctx, pod)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		if pod.Spec.NodeName != "" && !strings.HasPrefix(pod.Spec.NodeName, realNodePrefix) {
			StopTrying(fmt.Sprintf("pod %s was scheduled to %s, not a real node", pod.Name, pod.Spec.NodeName)).Now()
		}
		g.Expect(pod.Spec.NodeName).To(beARealNode())
		g.Expect(podReady(pod)).To(BeTrue(), func() string { return whyNotReady(ctx, pod) })
	}).WithContext(ctx).Should(Succeed())
	return pod
}

// whyNotReady says what keeps a pod from Ready, as `kubectl describe` would: its phase, its
// conditions that are not True, its containers' waiting reasons, its claims and the last events
// of each.
func whyNotReady(ctx context.Context, pod *corev1.Pod) string {
	var b strings.Builder
	fmt.Fprintf(&b, "pod %s/%s on %q is %s", pod.Namespace, pod.Name, pod.Spec.NodeName, pod.Status.Phase)
	for _, c := range pod.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			fmt.Fprintf(&b, "; %s=%s %s %s", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	for _, s := range slices.Concat(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses) {
		if w := s.State.Waiting; w != nil {
			fmt.Fprintf(&b, "; container %s waiting: %s %s", s.Name, w.Reason, w.Message)
		}
	}
	lastEvents(ctx, &b, pod.Namespace, pod.Name)
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		claim := &corev1.PersistentVolumeClaim{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: v.PersistentVolumeClaim.ClaimName}, claim); err != nil {
			fmt.Fprintf(&b, "; claim %s: %v", v.PersistentVolumeClaim.ClaimName, err)
			continue
		}
		fmt.Fprintf(&b, "; claim %s is %s, volume %q, selected node %q", claim.Name, claim.Status.Phase,
			claim.Spec.VolumeName, claim.Annotations["volume.kubernetes.io/selected-node"])
		lastEvents(ctx, &b, claim.Namespace, claim.Name)
	}
	return b.String()
}

// lastEvents writes the last three events about the object of that name.
func lastEvents(ctx context.Context, b *strings.Builder, namespace, name string) {
	events := &corev1.EventList{}
	if err := k8sClient.List(ctx, events, client.InNamespace(namespace), client.MatchingFields{"involvedObject.name": name}); err != nil {
		fmt.Fprintf(b, "; events of %s: %v", name, err)
		return
	}
	last := func(e corev1.Event) time.Time { return cmp.Or(e.LastTimestamp.Time, e.EventTime.Time) }
	slices.SortFunc(events.Items, func(x, y corev1.Event) int { return last(x).Compare(last(y)) })
	for _, e := range events.Items[max(0, len(events.Items)-3):] {
		fmt.Fprintf(b, "; event of %s %s %s (x%d): %s", name, e.Type, e.Reason, e.Count, e.Message)
	}
}

// livePods lists the pods of namespace with labels that are not terminating.
func livePods(ctx context.Context, g Gomega, namespace string, labels client.MatchingLabels) []corev1.Pod {
	list := &corev1.PodList{}
	g.Expect(k8sClient.List(ctx, list, client.InNamespace(namespace), labels)).To(Succeed())
	var live []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			live = append(live, p)
		}
	}
	return live
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

var _ = Describe("The real nodes", Ordered, func() {
	BeforeAll(requireRealNode)

	It("are Ready beside the kwok nodes, labelled and tainted so that only pods that ask land on them", func(ctx SpecContext) {
		names := realNodeNames(ctx)
		if count, err := strconv.Atoi(os.Getenv("E2E_REAL_NODES")); err == nil {
			want := make([]string, count)
			for i := range want {
				want[i] = realNodePrefix + strconv.Itoa(i+1)
			}
			Expect(names).To(Equal(want), "the real nodes of a cluster started with REAL_NODES=%d", count)
		}
		for _, name := range names {
			Expect(name).To(beARealNode())
			node := &corev1.Node{}
			Eventually(func(g Gomega) {
				g.Expect(k8sClient.Get(ctx, client.ObjectKey{Name: name}, node)).To(Succeed())
				g.Expect(node.Status.Conditions).To(ContainElement(And(
					HaveField("Type", corev1.NodeReady), HaveField("Status", corev1.ConditionTrue))))
			}).WithContext(ctx).Should(Succeed(), "node %s", name)
			Expect(node.Labels).To(HaveKeyWithValue(realNodeLabel, "true"), name)
			Expect(node.Spec.Taints).To(ContainElement(And(
				HaveField("Key", realNodeLabel), HaveField("Effect", corev1.TaintEffectNoSchedule))), name)
			Expect(node.Status.Addresses).To(ContainElement(HaveField("Type", corev1.NodeInternalIP)), name)
		}
	})

	It("runs a Deployment of our own image that answers on its pod IPs and through a ClusterIP Service, and resolves Service names", func(ctx SpecContext) {
		ns := realNodeNamespace(ctx, "e2e-real")
		labels := map[string]string{"app": "agent"}
		dep := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: ns},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](2),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: agentPodSpec()},
			},
		}
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: ns},
			Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{
				{Name: "http", Port: 80, TargetPort: intstr.FromString("http")},
			}},
		}
		Expect(k8sClient.Create(ctx, dep)).To(Succeed())
		Expect(k8sClient.Create(ctx, svc)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(dep), dep)).To(Succeed())
			g.Expect(dep.Status.AvailableReplicas).To(BeEquivalentTo(2))
		}).WithContext(ctx).Should(Succeed())

		pods := &corev1.PodList{}
		Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(labels))).To(Succeed())
		Expect(pods.Items).To(HaveLen(2))
		names := make([]string, 0, len(pods.Items))
		for i := range pods.Items {
			pod := &pods.Items[i]
			Expect(pod.Spec.NodeName).To(beARealNode(), "the namespace's annotations place its pods")
			By("reaching pod " + pod.Name + " on " + pod.Spec.NodeName + " at its IP " + pod.Status.PodIP)
			expectAgent(ctx, pod, "/hostname", http.StatusOK, Equal(pod.Name))
			names = append(names, pod.Name)
		}

		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
		By("reaching the Service on its ClusterIP " + svc.Spec.ClusterIP + " (kube-proxy, nftables)")
		Eventually(func(g Gomega) {
			code, body, err := httpGet(ctx, "http://"+svc.Spec.ClusterIP+"/hostname")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(http.StatusOK))
			g.Expect(names).To(ContainElement(body))
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())

		client0 := &pods.Items[0]
		By("resolving Service names from a pod (cluster DNS)")
		expectAgent(ctx, client0, "/resolve?name=agent."+ns+".svc.cluster.local", http.StatusOK, Equal(svc.Spec.ClusterIP))
		expectAgent(ctx, client0, "/resolve?name=kubernetes.default", http.StatusOK, Equal("10.96.0.1"))
		By("reaching the Service by name from a pod")
		expectAgent(ctx, client0, "/dial?addr=agent:80", http.StatusOK, Equal("connected"))
	})

	It("gives a pod's service account exactly what RBAC grants it, through the API server's in-cluster address", func(ctx SpecContext) {
		ns := realNodeNamespace(ctx, "e2e-real-rbac")
		role := &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "read-pods", Namespace: ns},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}},
		}
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "read-pods", Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: ns}},
		}
		Expect(k8sClient.Create(ctx, role)).To(Succeed())
		Expect(k8sClient.Create(ctx, binding)).To(Succeed())
		pod := runningAgentPod(ctx, ns)

		expectAgent(ctx, pod, "/kube?path=/api/v1/namespaces/"+ns+"/pods", http.StatusOK, ContainSubstring(`"kind":"PodList"`))
		expectAgent(ctx, pod, "/kube?path=/api/v1/namespaces/"+ns+"/secrets", http.StatusForbidden,
			ContainSubstring(`system:serviceaccount:`+ns+`:default`))
		expectAgent(ctx, pod, "/kube?path=/api/v1/nodes", http.StatusForbidden, ContainSubstring("forbidden"))
	})

	It("restarts a crashing container and serves its logs through the kubelet", func(ctx SpecContext) {
		ns := realNodeNamespace(ctx, "e2e-real-crash")
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "crasher", Namespace: ns},
			Spec:       agentPodSpec("--exit-after=1s"),
		}
		pod.Spec.Containers[0].ReadinessProbe = nil
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
			g.Expect(pod.Status.ContainerStatuses).To(HaveLen(1))
			g.Expect(pod.Status.ContainerStatuses[0].RestartCount).To(BeNumerically(">=", 1))
		}).WithContext(ctx).Should(Succeed())

		clientset := kubernetes.NewForConfigOrDie(cfg)
		Eventually(func(g Gomega) {
			logs, err := clientset.CoreV1().Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{Previous: true}).DoRaw(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(logs)).To(ContainSubstring("Exiting with status 1 after 1s, as asked"))
		}).WithContext(ctx).Should(Succeed())
	})

	It("runs a preloaded image with pull policy Never after the kubelet pulled the same image under another name", func(ctx SpecContext) {
		ns := realNodeNamespace(ctx, "e2e-real-pulled")
		agent := requiredEnv("E2E_AGENT_IMAGE")
		pulled := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pulled", Namespace: ns}, Spec: agentPodSpec()}
		pulled.Spec.Containers[0].Image = strings.Replace(agent, requiredEnv("E2E_IMAGES_REGISTRY"), requiredEnv("E2E_IMAGES_REGISTRY_TLS"), 1)
		pulled.Spec.Containers[0].ImagePullPolicy = corev1.PullAlways
		Expect(k8sClient.Create(ctx, pulled)).To(Succeed())
		waitPodReady(ctx, pulled)
		By("the kubelet pulled " + pulled.Spec.Containers[0].Image + "; " + agent + " is the same image, loaded onto the node")
		preloaded := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "preloaded", Namespace: ns}, Spec: agentPodSpec()}
		preloaded.Spec.NodeName = pulled.Spec.NodeName
		Expect(k8sClient.Create(ctx, preloaded)).To(Succeed())
		waitPodReady(ctx, preloaded)
	})

	It("runs a command in a container through the kubelet (kubectl exec)", func(ctx SpecContext) {
		ns := realNodeNamespace(ctx, "e2e-real-exec")
		pod := runningAgentPod(ctx, ns)
		out, err := exec.CommandContext(ctx, requiredEnv("E2E_KUBECTL"), "exec", "-n", ns, pod.Name, "--",
			"/agent", "--print-hostname").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		Expect(strings.TrimSpace(string(out))).To(Equal(pod.Name))
	})

	It("cleans up a pod's node-local state when the pod is deleted", func(ctx SpecContext) {
		ns := realNodeNamespace(ctx, "e2e-real-cleanup")
		pod := runningAgentPod(ctx, ns)
		state := []string{
			realNodeDir(pod.Spec.NodeName, "kubelet", "pods", string(pod.UID)),         // volumes, token, etc-hosts
			realNodeDir(pod.Spec.NodeName, "cni", "ipam", "quintet", pod.Status.PodIP), // the pod's address
		}
		for _, path := range state {
			Expect(path).To(BeAnExistingFile(), "node-local state of a running pod")
		}
		Expect(sandboxesOf(pod)).To(HaveLen(1))

		Expect(k8sClient.Delete(ctx, pod)).To(Succeed())
		Eventually(func(g Gomega) {
			for _, path := range state {
				g.Expect(path).NotTo(BeAnExistingFile())
			}
			g.Expect(sandboxesOf(pod)).To(BeEmpty())
		}).WithContext(ctx).Should(Succeed())
	})

	It("keeps pod traffic on the machine: a host off the bridges is unreachable from pods and the guard counts the drops", func(ctx SpecContext) {
		host := startTestHost(ctx)
		By("reaching the test host " + host + " from this machine itself: it exists and answers")
		Eventually(func(g Gomega) {
			code, _, err := httpGet(ctx, "http://"+host+"/healthz")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(http.StatusOK))
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())

		ns := realNodeNamespace(ctx, "e2e-real-guard")
		pod := runningAgentPod(ctx, ns)
		before := guardDrops()
		By("dialling the test host from a pod")
		code, body, err := httpGet(ctx, agentURL(pod, "/dial?addr="+host))
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusBadGateway), "the pod reached %s: %s", host, body)
		Expect(body).To(ContainSubstring("timeout"))
		Expect(guardDrops()).To(BeNumerically(">", before), "the guard's counter did not count the dropped packets")
	})
})

// sandboxesOf lists a pod's sandboxes on the real node it was scheduled to, through the CRI.
func sandboxesOf(pod *corev1.Pod) []string {
	return strings.Fields(crictl(pod.Spec.NodeName, "pods", "--quiet", "--label", "io.kubernetes.pod.uid="+string(pod.UID)))
}

// crictl runs crictl against the containerd of the real node named node and returns what it
// printed.
func crictl(node string, args ...string) string {
	cmd := exec.Command(requiredEnv("E2E_CRICTL"),
		append([]string{"--runtime-endpoint", "unix://" + realNodeDir(node, "containerd", "containerd.sock")}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred(), "crictl on %s: %s: %s", node, strings.Join(args, " "), stderr.String())
	return string(out)
}

// guardDrops reads the packet count of the host's forward guard, which keeps every real
// node's pod traffic on the machine.
func guardDrops() int {
	out, err := exec.Command("nft", "--json", "list", "counter", "inet", "quintet_guard", "forward_dropped").CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	var listing struct {
		Nftables []struct {
			Counter *struct {
				Packets int `json:"packets"`
			} `json:"counter"`
		} `json:"nftables"`
	}
	Expect(json.Unmarshal(out, &listing)).To(Succeed())
	for _, item := range listing.Nftables {
		if item.Counter != nil {
			return item.Counter.Packets
		}
	}
	Fail("no counter in: " + string(out))
	return 0
}

// startTestHost makes a test host that is not on a pod bridge: a network namespace of its
// own behind a veth pair, with the agent listening in it. It returns the host's address; all
// of it is removed when the spec ends. Nothing here is ever outside the machine.
func startTestHost(ctx context.Context) string {
	const (
		netns    = "quintet-e2e-host"
		hostSide = "qe2e-h"
		nsSide   = "qe2e-n"
		hostAddr = "10.250.77.1"
		testAddr = "10.250.77.2"
	)
	ip := func(args ...string) {
		out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "ip %s: %s", strings.Join(args, " "), out)
	}
	_ = exec.Command("ip", "netns", "delete", netns).Run() // a leftover from an interrupted run
	ip("netns", "add", netns)
	DeferCleanup(func() { _ = exec.Command("ip", "netns", "delete", netns).Run() }) // also removes the veth pair
	ip("link", "add", hostSide, "type", "veth", "peer", "name", nsSide, "netns", netns)
	ip("addr", "add", hostAddr+"/30", "dev", hostSide)
	ip("link", "set", hostSide, "up")
	ip("-n", netns, "addr", "add", testAddr+"/30", "dev", nsSide)
	ip("-n", netns, "link", "set", nsSide, "up")
	ip("-n", netns, "link", "set", "lo", "up")
	ip("-n", netns, "route", "add", "default", "via", hostAddr)

	listen := fmt.Sprintf("%s:%d", testAddr, agentPort)
	agent := exec.Command("ip", "netns", "exec", netns, requiredEnv("E2E_AGENT_BINARY"), "--listen="+listen)
	agent.Stdout, agent.Stderr = GinkgoWriter, GinkgoWriter
	Expect(agent.Start()).To(Succeed())
	DeferCleanup(func() {
		_ = agent.Process.Kill()
		_ = agent.Wait()
	})
	return listen
}
