//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// runNodeFault plays a fault on a real node as `make <fault> NODE=<node>` does (the target runs
// this command) and returns what it printed.
func runNodeFault(ctx context.Context, fault, node string) string {
	out, err := nodeFaultCommand(ctx, fault, node).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "%s %s: %s", fault, node, out)
	GinkgoWriter.Printf("%s", out)
	return string(out)
}

func nodeFaultCommand(ctx context.Context, fault, node string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, requiredEnv("E2E_LOCALCLUSTER"), fault, "--dir", requiredEnv("E2E_LOCAL_DIR"), "--node", node) //nolint:gosec // bin/'s localcluster
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// requireRealNodes returns the real nodes, skipping the specs when there are fewer than want,
// unless REAL_NODE is required, when it fails them.
func requireRealNodes(ctx context.Context, want int) []string {
	requireRealNode(ctx)
	nodes := realNodeNames(ctx)
	if len(nodes) < want {
		if os.Getenv("REAL_NODE") == "required" {
			Fail(fmt.Sprintf("these specs need %d real nodes, the cluster has %d: REAL_NODES=%d", want, len(nodes), want))
		}
		Skip(fmt.Sprintf("these specs need %d real nodes, the cluster has %d (REAL_NODES=%d)", want, len(nodes), want))
	}
	return nodes
}

// nodeReadyStatus is the status of a Node's Ready condition ("" before it has one).
func nodeReadyStatus(ctx context.Context, g Gomega, name string) corev1.ConditionStatus {
	node := &corev1.Node{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Name: name}, node)).To(Succeed())
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return ""
}

// agentOn runs an agent pod pinned to a node and waits until it is Ready there.
func agentOn(ctx context.Context, namespace, node string) *corev1.Pod {
	spec := agentPodSpec()
	spec.NodeSelector = map[string]string{corev1.LabelHostname: node}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "agent-" + node, Namespace: namespace}, Spec: spec}
	Expect(k8sClient.Create(ctx, pod)).To(Succeed())
	waitPodReady(ctx, pod)
	return pod
}

func waitPodReady(ctx context.Context, pod *corev1.Pod) {
	waitPodReadySince(ctx, pod, time.Time{})
}

// waitPodReadySince waits until a pod turned Ready at or after since: its status is then the
// kubelet's since, not one a node's fault left behind (a pod address of a sandbox gone).
func waitPodReadySince(ctx context.Context, pod *corev1.Pod, since time.Time) {
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		g.Expect(podReady(pod)).To(BeTrue(), func() string { return whyNotReady(ctx, pod) })
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady {
				g.Expect(c.LastTransitionTime.Time).NotTo(BeTemporally("<", since.Truncate(time.Second)), "pod %s Ready since", pod.Name)
			}
		}
	}).WithContext(ctx).Should(Succeed())
}

// dialPath asks an agent to open a TCP connection to another agent's pod address.
func dialPath(to *corev1.Pod) string {
	return "/dial?addr=" + net.JoinHostPort(to.Status.PodIP, strconv.Itoa(agentPort))
}

// A dropped packet times out; a refused one (an address something still answers for) does not.
var (
	connected = Equal("connected")
	blackhole = ContainSubstring("i/o timeout")
)

// diskPod writes a mark on its volume when the volume has none, and prints what it found, then
// sleeps: its log says whether the volume kept its data across a restart of its node.
func diskPod(namespace, node string) (*corev1.PersistentVolumeClaim, *corev1.Pod) {
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "disk", Namespace: namespace},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("16Mi")}},
		},
	}
	spec := restrictedPodSpec()
	spec.SecurityContext.RunAsUser = ptr.To(int64(65532))
	spec.SecurityContext.FSGroup = ptr.To(int64(65532))
	spec.NodeSelector = map[string]string{corev1.LabelHostname: node}
	c := &spec.Containers[0]
	c.Image = requiredEnv("E2E_IMAGES") + "/busybox:debian-12"
	c.ImagePullPolicy = corev1.PullNever
	c.Command = []string{"/bin/sh", "-c",
		`if [ -f /data/mark ]; then echo "found $(cat /data/mark)"; else echo "$0" > /data/mark && echo created; fi; exec /bin/busybox sleep 2147483647`,
		"written before the fault"}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim.Name}}}}
	return claim, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "disk", Namespace: namespace}, Spec: spec}
}

// deleteAndWait deletes a pod at once and waits until it is gone.
func deleteAndWait(ctx context.Context, pod *corev1.Pod) {
	Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, pod, client.GracePeriodSeconds(0)))).To(Succeed())
	Eventually(func() error {
		return k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
	}).WithContext(ctx).Should(MatchError(ContainSubstring("not found")))
}

// byLocalVolumes orders nodes by the local volumes bound to each, most first: the faults that
// lose a node's pods or disk take the last, where they cost the rest of the suite least (the S3
// store's and Prometheus's volumes are on some node).
func byLocalVolumes(ctx context.Context, nodes []string) []string {
	volumes := &corev1.PersistentVolumeList{}
	Expect(k8sClient.List(ctx, volumes)).To(Succeed())
	count := map[string]int{}
	for _, v := range volumes.Items {
		if v.Spec.NodeAffinity == nil || v.Spec.NodeAffinity.Required == nil {
			continue
		}
		for _, term := range v.Spec.NodeAffinity.Required.NodeSelectorTerms {
			for _, e := range term.MatchExpressions {
				if e.Key == corev1.LabelHostname {
					for _, node := range e.Values {
						count[node]++
					}
				}
			}
		}
	}
	ordered := slices.Clone(nodes)
	slices.SortStableFunc(ordered, func(a, b string) int { return count[b] - count[a] })
	return ordered
}

func podLog(ctx context.Context, pod *corev1.Pod) string {
	clientset, err := kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	data, err := clientset.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred())
	return string(data)
}

// Serial: each spec takes a real node away from every other spec.
var _ = Describe("Node faults on the real nodes", Ordered, Serial, Label("node-faults"), func() {
	var (
		ns     string
		nodes  []string
		agents []*corev1.Pod // one per real node, in the order of nodes
	)

	BeforeAll(func(ctx SpecContext) {
		nodes = byLocalVolumes(ctx, requireRealNodes(ctx, 3))
		ns = realNodeNamespace(ctx, "e2e-node-faults")
		for _, node := range nodes {
			agents = append(agents, agentOn(ctx, ns, node))
		}
		// Whatever a failed spec left, the nodes run and reach one another again.
		DeferCleanup(func(ctx SpecContext) {
			for _, node := range nodes {
				_, _ = nodeFaultCommand(ctx, "node-heal", node).CombinedOutput()
				_, _ = nodeFaultCommand(ctx, "node-start", node).CombinedOutput()
				_, _ = nodeFaultCommand(ctx, "node-uncordon", node).CombinedOutput()
			}
		})
	})

	It("refuses a node that is not one of the local cluster's real nodes", func(ctx SpecContext) {
		for _, name := range []string{"kwok-worker-1", "quintet-node-" + strconv.Itoa(len(nodes)+1), "production"} {
			out, err := nodeFaultCommand(ctx, "node-stop", name).CombinedOutput()
			Expect(err).To(HaveOccurred(), "node-stop %s: %s", name, out)
			Expect(string(out)).To(ContainSubstring("is not a real node of the local cluster"))
		}
	})

	It("runs pods on every real node that reach one another across nodes through the host's routes", func(ctx SpecContext) {
		for _, from := range agents {
			for _, to := range agents {
				if from != to {
					expectAgent(ctx, from, dialPath(to), http.StatusOK, connected)
				}
			}
		}
	})

	It("partitions a node's pods from the other nodes' pods both ways while its kubelet still renews its lease, and heals", func(ctx SpecContext) {
		victim, other := agents[len(agents)-1], agents[0]
		partitioned := time.Now()
		Expect(runNodeFault(ctx, "node-partition", victim.Spec.NodeName)).To(ContainSubstring("Partitioned " + victim.Spec.NodeName))
		expectAgent(ctx, victim, dialPath(other), http.StatusBadGateway, blackhole)
		expectAgent(ctx, other, dialPath(victim), http.StatusBadGateway, blackhole)
		expectAgent(ctx, agents[1], dialPath(other), http.StatusOK, connected)
		By("the partitioned node's pods still resolve names with the cluster's DNS, and its kubelet renews its Lease")
		expectAgent(ctx, victim, "/resolve?name=kubernetes.default.svc.cluster.local", http.StatusOK, Equal("10.96.0.1"))
		Eventually(func(g Gomega) {
			lease := &coordinationv1.Lease{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: corev1.NamespaceNodeLease, Name: victim.Spec.NodeName}, lease)).To(Succeed())
			g.Expect(lease.Spec.RenewTime.Time).To(BeTemporally(">", partitioned))
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		Expect(nodeReadyStatus(ctx, Default, victim.Spec.NodeName)).To(Equal(corev1.ConditionTrue))

		runNodeFault(ctx, "node-heal", victim.Spec.NodeName)
		expectAgent(ctx, victim, dialPath(other), http.StatusOK, connected)
		expectAgent(ctx, other, dialPath(victim), http.StatusOK, connected)
	})

	It("loses a stopped node's pods and an isolated node's kubelet: both Nodes turn Unknown; started and healed, both are Ready, and the stopped node's volume kept its data", func(ctx SpecContext) {
		stopped, isolated, witness := agents[len(agents)-1], agents[len(agents)-2], agents[0]
		claim, disk := diskPod(ns, stopped.Spec.NodeName)
		Expect(k8sClient.Create(ctx, claim)).To(Succeed())
		Expect(k8sClient.Create(ctx, disk)).To(Succeed())
		waitPodReady(ctx, disk)
		Eventually(func() string { return podLog(ctx, disk) }).WithContext(ctx).Should(Equal("created\n"))

		faulted := time.Now()
		Expect(runNodeFault(ctx, "node-stop", stopped.Spec.NodeName)).To(ContainSubstring("as a power loss would: SIGKILL to kubelet-" + stopped.Spec.NodeName))
		Expect(runNodeFault(ctx, "node-isolate", isolated.Spec.NodeName)).To(ContainSubstring("Isolated " + isolated.Spec.NodeName))
		By("the stopped node's pod address no longer answers at all, as a machine without power; the isolated node's pods are cut off")
		expectAgent(ctx, witness, dialPath(stopped), http.StatusBadGateway, blackhole)
		expectAgent(ctx, witness, dialPath(isolated), http.StatusBadGateway, blackhole)
		By("the node lifecycle controller marks both Nodes Unknown once their kubelets stop posting status")
		for _, node := range []string{stopped.Spec.NodeName, isolated.Spec.NodeName} {
			Eventually(func(g Gomega) {
				g.Expect(nodeReadyStatus(ctx, g, node)).To(Equal(corev1.ConditionUnknown))
			}).WithContext(ctx).WithTimeout(3*time.Minute).Should(Succeed(), node)
			AddReportEntry("node-fault", fmt.Sprintf("%s Unknown %s after the fault", node, time.Since(faulted).Round(time.Second)))
		}

		started := time.Now()
		Expect(runNodeFault(ctx, "node-start", stopped.Spec.NodeName)).To(ContainSubstring("it is Ready"))
		Expect(runNodeFault(ctx, "node-heal", isolated.Spec.NodeName)).To(ContainSubstring("Healed " + isolated.Spec.NodeName))
		for _, node := range []string{stopped.Spec.NodeName, isolated.Spec.NodeName} {
			Eventually(func(g Gomega) {
				g.Expect(nodeReadyStatus(ctx, g, node)).To(Equal(corev1.ConditionTrue))
			}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed(), node)
		}
		By("the stopped node's pods run again in new sandboxes, and the volume kept what was written before the power loss")
		waitPodReadySince(ctx, stopped, started)
		expectAgent(ctx, witness, dialPath(stopped), http.StatusOK, connected)
		expectAgent(ctx, witness, dialPath(isolated), http.StatusOK, connected)
		waitPodReadySince(ctx, disk, started)
		Eventually(func() string { return podLog(ctx, disk) }).WithContext(ctx).Should(Equal("found written before the fault\n"))
	})

	It("wipes a node: it comes back Ready and empty, so a pod of its local volume cannot start while the others run", func(ctx SpecContext) {
		wiped := agents[len(agents)-1]
		disk := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "disk", Namespace: ns}}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(disk), disk)).To(Succeed(), "the previous spec's pod with a local volume")
		Expect(disk.Spec.NodeName).To(Equal(wiped.Spec.NodeName))

		claim := &corev1.PersistentVolumeClaim{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "disk"}, claim)).To(Succeed())
		volume := &corev1.PersistentVolume{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: claim.Spec.VolumeName}, volume)).To(Succeed())
		Expect(volume.Spec.Local).NotTo(BeNil())
		Expect(volume.Spec.Local.Path).To(BeADirectory())
		// Other specs' volumes may be on the node too: the count is at least ours.
		Expect(runNodeFault(ctx, "node-wipe", wiped.Spec.NodeName)).To(MatchRegexp(`its disk and its [1-9][0-9]* local volumes are gone`))
		Expect(volume.Spec.Local.Path).NotTo(BeAnExistingFile(), "the local volume's folder goes with the node's disk")
		started := time.Now()
		Expect(runNodeFault(ctx, "node-start", wiped.Spec.NodeName)).To(ContainSubstring("it is Ready"))
		By("the node's images are loaded again: its agent pod runs")
		waitPodReadySince(ctx, wiped, started)
		expectAgent(ctx, agents[0], dialPath(wiped), http.StatusOK, connected)
		By("the volume's folder is gone with the disk: the kubelet cannot mount it")
		Eventually(func(g Gomega) {
			events := &corev1.EventList{}
			g.Expect(k8sClient.List(ctx, events, client.InNamespace(ns))).To(Succeed())
			g.Expect(events.Items).To(ContainElement(And(
				HaveField("InvolvedObject.Name", disk.Name), HaveField("Reason", "FailedMount"),
				HaveField("Message", ContainSubstring("does not exist")))))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(disk), disk)).To(Succeed())
		Expect(podReady(disk)).To(BeFalse())
		deleteAndWait(ctx, disk)
	})

	It("drains a node through the eviction API: a PodDisruptionBudget holds the drain, and once it allows, the evicted pod waits for the uncordoned node", func(ctx SpecContext) {
		drained := nodes[len(nodes)-1]
		By("removing the bare agent pods: kubectl drain refuses pods no controller would make again")
		for _, pod := range agents {
			deleteAndWait(ctx, pod)
		}
		labels := map[string]string{"app": "spread"}
		spec := agentPodSpec()
		spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: corev1.LabelHostname}}}}
		deploy := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "spread", Namespace: ns},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To(int32(len(nodes))),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
			},
		}
		Expect(k8sClient.Create(ctx, deploy)).To(Succeed())
		budget := &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: "spread", Namespace: ns},
			Spec: policyv1.PodDisruptionBudgetSpec{
				MinAvailable: ptr.To(intstr.FromInt32(int32(len(nodes)))),
				Selector:     &metav1.LabelSelector{MatchLabels: labels},
			},
		}
		Expect(k8sClient.Create(ctx, budget)).To(Succeed())
		onDrained := func(g Gomega) []corev1.Pod {
			pods := &corev1.PodList{}
			g.Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(labels))).To(Succeed())
			var on []corev1.Pod
			for _, p := range pods.Items {
				if p.Spec.NodeName == drained && p.DeletionTimestamp == nil {
					on = append(on, p)
				}
			}
			return on
		}
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(budget), budget)).To(Succeed())
			g.Expect(budget.Status.CurrentHealthy).To(Equal(int32(len(nodes))), "one Ready pod on every real node")
		}).WithContext(ctx).Should(Succeed())
		held := onDrained(Default)
		Expect(held).To(HaveLen(1))

		By("kubectl drain, with the budget allowing no disruption: it retries and the pod stays")
		short, cancel := context.WithTimeout(ctx, 20*time.Second)
		out, err := nodeFaultCommand(short, "node-drain", drained).CombinedOutput()
		cancel()
		Expect(err).To(HaveOccurred(), "the drain must not finish: %s", out)
		Expect(string(out)).To(ContainSubstring("evicting pod "+ns+"/"+held[0].Name), "kubectl drain goes through the eviction API")
		Expect(string(out)).To(ContainSubstring("Cannot evict pod as it would violate the pod's disruption budget"))
		Expect(onDrained(Default)).To(ConsistOf(HaveField("UID", held[0].UID)))

		By("with one disruption allowed the drain evicts the pod; its replacement has no node to go to")
		Expect(k8sClient.Patch(ctx, budget, client.RawPatch("application/merge-patch+json",
			[]byte(fmt.Sprintf(`{"spec":{"minAvailable":%d}}`, len(nodes)-1))))).To(Succeed())
		Expect(runNodeFault(ctx, "node-drain", drained)).To(ContainSubstring("drained"))
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(labels))).To(Succeed())
			g.Expect(pods.Items).To(ContainElement(HaveField("Status.Phase", corev1.PodPending)), "the evicted pod's replacement")
			g.Expect(pods.Items).NotTo(ContainElement(HaveField("UID", held[0].UID)))
		}).WithContext(ctx).Should(Succeed())

		By("uncordoned, the node takes the replacement")
		runNodeFault(ctx, "node-uncordon", drained)
		Eventually(func(g Gomega) {
			on := onDrained(g)
			g.Expect(on).To(HaveLen(1))
			g.Expect(podReady(&on[0])).To(BeTrue())
		}).WithContext(ctx).Should(Succeed())
	})
})
