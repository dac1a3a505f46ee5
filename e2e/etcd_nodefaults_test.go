//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/e2e/robustness"
)

// followerDownFor is how long a follower's node stays stopped: well past the node lifecycle
// controller's grace period (50 s), well short of replaceUnreachableAfter (10 m by default).
const followerDownFor = 2 * time.Minute

// memberView is what one member, asked at its pod's address, says of itself and its leader
// (etcd's JSON gateway writes the IDs as decimal numbers).
type memberView struct {
	Header struct {
		MemberID string `json:"member_id"`
	} `json:"header"`
	Leader string `json:"leader"`
}

func askMember(ctx context.Context, pod *corev1.Pod) (memberView, error) {
	var v memberView
	err := etcdCall(ctx, fmt.Sprintf("http://%s:2379/v3/maintenance/status", pod.Status.PodIP), map[string]any{}, &v)
	return v, err
}

// moveLeader makes target the leader, asking the leader (etcd's MoveLeader), and waits until
// target says it leads.
func moveLeader(ctx context.Context, leader, target *corev1.Pod) {
	Expect(etcdCall(ctx, fmt.Sprintf("http://%s:2379/v3/maintenance/transfer-leadership", leader.Status.PodIP),
		map[string]string{"targetID": memberID(ctx, target)}, &map[string]any{})).To(Succeed())
	Eventually(func(g Gomega) {
		v, err := askMember(ctx, target)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(v.Leader).To(Equal(v.Header.MemberID))
	}).WithContext(ctx).WithTimeout(30*time.Second).Should(Succeed(), "%s leads", target.Name)
}

// memberID is the ID of the member a pod runs, as its member says.
func memberID(ctx context.Context, pod *corev1.Pod) string {
	v, err := askMember(ctx, pod)
	Expect(err).NotTo(HaveOccurred())
	return v.Header.MemberID
}

// expectNewLeader waits until every member but old follows a leader that is not old's member.
func expectNewLeader(ctx context.Context, pods map[string]*corev1.Pod, old *corev1.Pod, oldID string) {
	Eventually(func(g Gomega) {
		for name, pod := range pods {
			if name == old.Name {
				continue
			}
			v, err := askMember(ctx, pod)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(v.Leader).NotTo(Or(Equal(oldID), Equal("0"), BeEmpty()), "%s's leader", name)
		}
	}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
}

// expectRejoinedAsFollower waits, for at most timeout, until the cluster is Ready with the
// members it had before a fault, a leader among them, and the old leader's pod (name) runs its
// member (id) again as a follower.
func expectRejoinedAsFollower(ctx context.Context, cluster *unstructured.Unstructured, version string, before etcdStatus,
	name, id string, timeout time.Duration,
) {
	Eventually(func(g Gomega) {
		after := checkEtcdReady(ctx, g, cluster, 3, version)
		g.Expect(after.memberIDs()).To(ConsistOf(before.memberIDs()))
		g.Expect(after.leader()).NotTo(BeEmpty())
		v, err := askMember(ctx, memberPods(ctx, cluster)[name])
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(v.Header.MemberID).To(Equal(id))
		g.Expect(v.Leader).NotTo(Or(Equal(id), Equal("0")), "the old leader follows")
	}).WithContext(ctx).WithTimeout(timeout).Should(Succeed())
}

// memberPods reads a cluster's member pods by name.
func memberPods(ctx context.Context, cluster *unstructured.Unstructured) map[string]*corev1.Pod {
	pods := &corev1.PodList{}
	Expect(k8sClient.List(ctx, pods, client.InNamespace(cluster.GetNamespace()), client.MatchingLabels{"etcd_cluster": cluster.GetName()})).To(Succeed())
	byName := map[string]*corev1.Pod{}
	for i := range pods.Items {
		byName[pods.Items[i].Name] = &pods.Items[i]
	}
	return byName
}

// expectNoReplacement checks, for d, that the cluster keeps the members it had: the operator
// replaces nobody while a member is out for less than replaceUnreachableAfter.
func expectNoReplacement(ctx context.Context, cluster *unstructured.Unstructured, ids []string, d time.Duration) {
	Consistently(func(g Gomega) {
		g.Expect(getEtcdStatus(ctx, g, cluster).memberIDs()).To(ConsistOf(ids))
	}).WithContext(ctx).WithTimeout(d).WithPolling(5 * time.Second).Should(Succeed())
}

// Serial: each spec takes a real node away from every other spec.
var _ = Describe("The etcd-cluster operator on node faults", Ordered, Serial, Label("node-faults"), func() {
	var (
		cluster     *unstructured.Unstructured
		version     string
		managerNode string
	)

	BeforeAll(func(ctx SpecContext) {
		requireRealNodes(ctx, 3)
		version = requiredEnv("E2E_ETCD_VERSION")
		ns := createNamespace(ctx, "etcd-nodes", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
		deployOperatorCopyOnRealNode(ctx, "etcd-cluster", "nodes", ns)
		managerNode = managerOnRealNode(ctx, etcdManagerNamespace+"-nodes").Spec.NodeName
		cluster = harnessEtcdCluster(ns, robustness.NamePrefix+"-nodes", version, nil)
		cluster.Object["spec"].(map[string]any)["pod"].(map[string]any)["antiAffinity"] = "Required"
		Expect(k8sClient.Create(ctx, cluster)).To(Succeed())
		expectEtcdReady(ctx, cluster, 3, version)
		Expect(memberNodes(ctx, cluster)).To(HaveLen(3), "antiAffinity Required: one member per real node")
		DeferCleanup(func(ctx SpecContext) {
			for _, node := range realNodeNames(ctx) {
				_, _ = nodeFaultCommand(ctx, "node-heal", node).CombinedOutput()
				_, _ = nodeFaultCommand(ctx, "node-start", node).CombinedOutput()
				_, _ = nodeFaultCommand(ctx, "node-uncordon", node).CombinedOutput()
			}
		})
	})

	AfterEach(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			dumpForFailure(ctx, "etcd-nodes", cluster.GetNamespace(), etcdManagerNamespace+"-nodes")
		}
	})

	It("keeps a follower's member, ID and data, when its node is stopped for 2 minutes and started: nothing is replaced, every acknowledged write is kept", robustnessScenario, func(ctx SpecContext) {
		before := expectEtcdReady(ctx, cluster, 3, version)
		var victim *corev1.Pod
		for name, pod := range memberPods(ctx, cluster) {
			if name != before.leader() && pod.Spec.NodeName != managerNode {
				victim = pod
			}
		}
		Expect(victim).NotTo(BeNil(), "a follower on another node than the manager's")
		traffic := startEtcdTraffic(ctx, cluster, "follower-node-stopped")
		runNodeFault(ctx, "node-stop", victim.Spec.NodeName)
		By(fmt.Sprintf("two members serve for %s while %s's node is down; the operator replaces nobody", followerDownFor, victim.Name))
		expectNoReplacement(ctx, cluster, before.memberIDs(), followerDownFor)
		Expect(nodeReadyStatus(ctx, Default, victim.Spec.NodeName)).To(Equal(corev1.ConditionUnknown))

		runNodeFault(ctx, "node-start", victim.Spec.NodeName)
		By(victim.Name + " rejoins as the same member, on its data")
		Eventually(func(g Gomega) {
			g.Expect(checkEtcdReady(ctx, g, cluster, 3, version).memberIDs()).To(ConsistOf(before.memberIDs()))
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		traffic.stopAndCheck(ctx)
	}, SpecTimeout(10*time.Minute))

	It("elects a new leader when the leader's node is stopped for 60 s: the majority takes writes, and once started the old leader rejoins as a follower on its data; nobody is replaced", robustnessScenario, func(ctx SpecContext) {
		before := expectEtcdReady(ctx, cluster, 3, version)
		pods := memberPods(ctx, cluster)
		leader := pods[before.leader()]
		Expect(leader).NotTo(BeNil())
		if node := managerOnRealNode(ctx, etcdManagerNamespace+"-nodes").Spec.NodeName; leader.Spec.NodeName == node {
			By("moving the leadership off the manager's node: losing the manager is a scenario of its own")
			for _, pod := range pods {
				if pod.Spec.NodeName != node {
					moveLeader(ctx, leader, pod)
					leader = pod
					break
				}
			}
		}
		leaderID := memberID(ctx, leader)
		traffic := startEtcdTraffic(ctx, cluster, "leader-node-stopped")
		stopped := time.Now()
		runNodeFault(ctx, "node-stop", leader.Spec.NodeName)

		By("the two members left elect a new leader and take writes through the client Service")
		expectNewLeader(ctx, pods, leader, leaderID)
		AddReportEntry("node-fault", fmt.Sprintf("a new leader %s after the leader's node stopped", time.Since(stopped).Round(time.Second)))
		Eventually(func() error { return etcdPut(ctx, etcdClientURL(ctx, cluster), "/stopped/service", "x") }).
			WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		AddReportEntry("node-fault", fmt.Sprintf("the majority takes writes %s after the leader's node stopped", time.Since(stopped).Round(time.Second)))
		expectNoReplacement(ctx, cluster, before.memberIDs(), 60*time.Second-time.Since(stopped))

		runNodeFault(ctx, "node-start", leader.Spec.NodeName)
		By(leader.Name + " rejoins as the same member, on its data, and follows")
		expectRejoinedAsFollower(ctx, cluster, version, before, leader.Name, leaderID, 3*time.Minute)
		traffic.stopAndCheck(ctx)
	}, SpecTimeout(8*time.Minute))

	It("elects a new leader when the leader's node is partitioned for 60 s: the cut-off member takes no write, and once healed it rejoins as a follower; nobody is replaced or restarted", robustnessScenario, func(ctx SpecContext) {
		before := expectEtcdReady(ctx, cluster, 3, version)
		pods := memberPods(ctx, cluster)
		leader := pods[before.leader()]
		Expect(leader).NotTo(BeNil())
		leaderID := memberID(ctx, leader)
		runs := memberRuns(ctx, cluster)
		traffic := startEtcdTraffic(ctx, cluster, "leader-node-partitioned")
		partitioned := time.Now()
		runNodeFault(ctx, "node-partition", leader.Spec.NodeName)

		By("the majority elects a new leader; the old one answers no write")
		expectNewLeader(ctx, pods, leader, leaderID)
		AddReportEntry("node-fault", fmt.Sprintf("a new leader %s after the partition", time.Since(partitioned).Round(time.Second)))
		Expect(etcdPut(ctx, fmt.Sprintf("http://%s:2379", leader.Status.PodIP), "/partitioned/minority", "x")).NotTo(Succeed(),
			"the member cut off from the majority must not take a write")
		By("the majority takes writes, at its members' addresses and through the client Service")
		for name, pod := range pods {
			if name == leader.Name {
				continue
			}
			Eventually(func() error {
				return etcdPut(ctx, fmt.Sprintf("http://%s:2379", pod.Status.PodIP), "/partitioned/majority", name)
			}).WithContext(ctx).WithTimeout(30*time.Second).Should(Succeed(), name)
		}
		Eventually(func() error { return etcdPut(ctx, etcdClientURL(ctx, cluster), "/partitioned/service", "x") }).
			WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		AddReportEntry("node-fault", fmt.Sprintf("the majority takes writes %s after the partition", time.Since(partitioned).Round(time.Second)))

		expectNoReplacement(ctx, cluster, before.memberIDs(), 60*time.Second-time.Since(partitioned))
		runNodeFault(ctx, "node-heal", leader.Spec.NodeName)
		By(leader.Name + " rejoins as a follower; the same members, none restarted")
		expectRejoinedAsFollower(ctx, cluster, version, before, leader.Name, leaderID, 2*time.Minute)
		Expect(restartsSince(runs, memberRuns(ctx, cluster))).To(BeZero(), "a partition restarts no member")
		traffic.stopAndCheck(ctx)
	}, SpecTimeout(8*time.Minute))

	It("keeps serving while every node is drained in turn and uncordoned: the budget lets one member go at a time, each waits for its node and comes back as the same member", robustnessScenario, func(ctx SpecContext) {
		before := expectEtcdReady(ctx, cluster, 3, version)
		traffic := startEtcdTraffic(ctx, cluster, "every-node-drained-in-turn")
		nodes := realNodeNames(ctx)
		for i, node := range nodes {
			var member *corev1.Pod
			for _, pod := range memberPods(ctx, cluster) {
				if pod.Spec.NodeName == node {
					member = pod
				}
			}
			Expect(member).NotTo(BeNil(), "antiAffinity Required: a member on %s", node)
			drained := time.Now()
			runNodeFault(ctx, "node-drain", node)
			evicted := time.Now()
			By(member.Name + " is evicted; its pod is made again and waits, unscheduled, for its node and its volume")
			var again *corev1.Pod
			Eventually(func(g Gomega) {
				again = memberPods(ctx, cluster)[member.Name]
				g.Expect(again).NotTo(BeNil())
				g.Expect(again.UID).NotTo(Equal(member.UID))
				g.Expect(again.Spec.NodeName).To(BeEmpty())
			}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
			if i == 0 {
				By("while it waits, the budget refuses to evict a second member: draining another node does not finish")
				next := nodes[1]
				short, cancel := context.WithTimeout(ctx, 15*time.Second)
				out, err := nodeFaultCommand(short, "node-drain", next).CombinedOutput()
				cancel()
				Expect(err).To(HaveOccurred(), "the drain of %s must not finish: %s", next, out)
				Expect(string(out)).To(ContainSubstring("Cannot evict pod as it would violate the pod's disruption budget"))
				runNodeFault(ctx, "node-uncordon", next)
			}
			runNodeFault(ctx, "node-uncordon", node)
			uncordoned := time.Now()
			Eventually(func(g Gomega) {
				pod := memberPods(ctx, cluster)[member.Name]
				g.Expect(pod).NotTo(BeNil())
				g.Expect(pod.UID).To(Equal(again.UID))
				g.Expect(pod.Spec.NodeName).To(Equal(node), "its local volume keeps it on its node")
				g.Expect(podReady(pod)).To(BeTrue(), func() string { return whyNotReady(ctx, pod) })
			}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
			AddReportEntry("node-fault", fmt.Sprintf("%s: the drain took %s (the budget waits until every member is Ready); %s's pod was Ready again %s after the uncordon",
				node, evicted.Sub(drained).Round(time.Second), member.Name, time.Since(uncordoned).Round(time.Second)))
			Eventually(func(g Gomega) {
				g.Expect(checkEtcdReady(ctx, g, cluster, 3, version).memberIDs()).To(ConsistOf(before.memberIDs()))
			}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		}
		traffic.stopAndCheck(ctx)
	}, SpecTimeout(12*time.Minute))

	It("hands the manager's leadership to its second replica when the leader's node stops: the new leader reports the member that went with the node, and the one that comes back", func(ctx SpecContext) {
		expectEtcdReady(ctx, cluster, 3, version)
		managers := etcdManagerNamespace + "-nodes"
		By("running the manager with two replicas, on two nodes")
		deploy := managerDeployment(ctx, managers)
		selector := deploy.Spec.Selector.MatchLabels
		patch := map[string]any{"spec": map[string]any{"replicas": 2, "template": map[string]any{"spec": map[string]any{
			"affinity": corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: selector}, TopologyKey: corev1.LabelHostname}}}}}}}}
		Expect(k8sClient.Patch(ctx, deploy, client.RawPatch(types.StrategicMergePatchType, []byte(mustJSON(patch))))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(deploy), deploy)).To(Succeed())
			g.Expect(deploy.Status.ObservedGeneration).To(Equal(deploy.Generation))
			g.Expect(deploy.Status).To(And(HaveField("Replicas", int32(2)), HaveField("UpdatedReplicas", int32(2)), HaveField("AvailableReplicas", int32(2))))
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())

		By("a replica of the rollout holds the lease (the replaced pod gave it up on its way out)")
		var leader string
		pod := &corev1.Pod{}
		Eventually(func(g Gomega) {
			leader = leaseHolder(ctx, g, managers)
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: managers, Name: leader}, pod)).To(Succeed())
			g.Expect(pod.DeletionTimestamp).To(BeNil(), "the lease holder %s is on its way out", leader)
			g.Expect(podReady(pod)).To(BeTrue(), "the lease holder %s is Ready", leader)
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		stopped := time.Now()
		runNodeFault(ctx, "node-stop", pod.Spec.NodeName)
		By("the other replica takes the lease once the stopped leader's has run out")
		Eventually(func(g Gomega) {
			g.Expect(leaseHolder(ctx, g, managers)).NotTo(Equal(leader))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		AddReportEntry("node-fault", fmt.Sprintf("the manager's second replica leads %s after the leader's node stopped", time.Since(stopped).Round(time.Second)))
		By("the new leader reconciles: the status counts the member that went with the node")
		Eventually(func(g Gomega) {
			g.Expect(getEtcdStatus(ctx, g, cluster).ReadyMembers).To(BeEquivalentTo(2))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		AddReportEntry("node-fault", fmt.Sprintf("the status says 2 members are ready %s after the leader's node stopped", time.Since(stopped).Round(time.Second)))

		runNodeFault(ctx, "node-start", pod.Spec.NodeName)
		expectEtcdReady(ctx, cluster, 3, version)
	}, SpecTimeout(10*time.Minute))

	It("replaces a follower whose node is wiped once it has been unreachable for replaceUnreachableAfter: the new member starts on the node once it is back, empty, and takes its data from the others", robustnessScenario, func(ctx SpecContext) {
		before := expectEtcdReady(ctx, cluster, 3, version)
		managers := etcdManagerNamespace + "-nodes"
		holder := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: managers, Name: leaseHolder(ctx, Default, managers)}, holder)).To(Succeed())
		var victim *corev1.Pod
		var victimID string // as the status writes it
		pods := memberPods(ctx, cluster)
		for _, m := range before.Members {
			if pod := pods[m.Name]; m.Name != before.leader() && pod != nil && pod.Spec.NodeName != holder.Spec.NodeName {
				victim, victimID = pod, m.ID
			}
		}
		Expect(victim).NotTo(BeNil(), "a follower on another node than the manager's leader")
		joinedAs := memberID(ctx, victim) // as its member says it, for the replacement's
		By("setting replaceUnreachableAfter to its least, 1m")
		Expect(k8sClient.Patch(ctx, cluster, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replaceUnreachableAfter":"1m"}}`)))).To(Succeed())
		expectEtcdReady(ctx, cluster, 3, version)
		Expect(etcdPut(ctx, etcdClientURL(ctx, cluster), "/wiped/before", "written before the wipe")).To(Succeed())
		traffic := startEtcdTraffic(ctx, cluster, "node-wiped")
		wiped := time.Now()
		runNodeFault(ctx, "node-wipe", victim.Spec.NodeName)

		By("nobody is replaced before replaceUnreachableAfter")
		expectNoReplacement(ctx, cluster, before.memberIDs(), 50*time.Second)
		By("then the operator removes the member, and deletes its pod without waiting for the stopped node")
		Eventually(func(g Gomega) {
			g.Expect(getEtcdStatus(ctx, g, cluster).memberIDs()).NotTo(ContainElement(victimID))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		AddReportEntry("node-fault", fmt.Sprintf("the wiped node's member was removed %s after the wipe", time.Since(wiped).Round(time.Second)))
		Eventually(func(g Gomega) {
			pod := memberPods(ctx, cluster)[victim.Name]
			g.Expect(pod).NotTo(BeNil())
			g.Expect(pod.UID).NotTo(Equal(victim.UID), "the pod on the stopped node is gone from the API")
			g.Expect(pod.Spec.SchedulingGates).To(BeEmpty(), "its replacement is added and started")
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		AddReportEntry("node-fault", fmt.Sprintf("the replacement's pod was made and released %s after the wipe; it waits for a node (antiAffinity Required)", time.Since(wiped).Round(time.Second)))
		Expect(nodeReadyStatus(ctx, Default, victim.Spec.NodeName)).To(Equal(corev1.ConditionUnknown))

		runNodeFault(ctx, "node-start", victim.Spec.NodeName)
		started := time.Now()
		By("the new member starts on the node, back and empty, and the cluster is Ready with it")
		var after etcdStatus
		Eventually(func(g Gomega) {
			after = checkEtcdReady(ctx, g, cluster, 3, version)
			g.Expect(after.memberIDs()).NotTo(ContainElement(victimID))
		}).WithContext(ctx).WithTimeout(4 * time.Minute).Should(Succeed())
		AddReportEntry("node-fault", fmt.Sprintf("Ready with the new member %s after the node started, %s after the wipe",
			time.Since(started).Round(time.Second), time.Since(wiped).Round(time.Second)))
		replacement := memberPods(ctx, cluster)[victim.Name]
		Expect(replacement.Spec.NodeName).To(Equal(victim.Spec.NodeName))
		Expect(memberID(ctx, replacement)).NotTo(Equal(joinedAs), "a new member, not the wiped one")
		Expect(etcdGetLocal(ctx, fmt.Sprintf("http://%s:2379", replacement.Status.PodIP), "/wiped/before")).
			To(Equal("written before the wipe"), "the new member's own copy holds what was written before the wipe")
		row := traffic.stopAndCheck(ctx)
		Expect(row.Replacements).To(Equal(1))
	}, SpecTimeout(12*time.Minute))
})

// managerDeployment is the one manager Deployment of an operator's namespace.
func managerDeployment(ctx context.Context, namespace string) *appsv1.Deployment {
	deploys := &appsv1.DeploymentList{}
	Expect(k8sClient.List(ctx, deploys, client.InNamespace(namespace), client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
	Expect(deploys.Items).To(HaveLen(1))
	return &deploys.Items[0]
}

// leaseHolder is the pod that holds the leader election Lease of the manager in namespace
// (its holder identity is the pod's name, an underscore and a UUID).
func leaseHolder(ctx context.Context, g Gomega, namespace string) string {
	lease := &coordinationv1.Lease{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "etcd-cluster.quintet.dev"}, lease)).To(Succeed())
	g.Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
	holder, _, found := strings.Cut(*lease.Spec.HolderIdentity, "_")
	g.Expect(found).To(BeTrue(), "holder identity %q", *lease.Spec.HolderIdentity)
	return holder
}
