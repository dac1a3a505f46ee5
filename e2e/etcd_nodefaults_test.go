//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

	It("elects a new leader when the leader's node is partitioned for 60 s: the cut-off member takes no write, and once healed it rejoins as a follower; nobody is replaced or restarted", robustnessScenario, func(ctx SpecContext) {
		before := expectEtcdReady(ctx, cluster, 3, version)
		pods := memberPods(ctx, cluster)
		leader := pods[before.leader()]
		Expect(leader).NotTo(BeNil())
		runs := memberRuns(ctx, cluster)
		traffic := startEtcdTraffic(ctx, cluster, "leader-node-partitioned")
		partitioned := time.Now()
		runNodeFault(ctx, "node-partition", leader.Spec.NodeName)

		By("the majority elects a new leader; the old one answers no write")
		var oldLeaderID string
		Eventually(func(g Gomega) {
			v, err := askMember(ctx, leader)
			g.Expect(err).NotTo(HaveOccurred())
			oldLeaderID = v.Header.MemberID
			for name, pod := range pods {
				if name == leader.Name {
					continue
				}
				v, err := askMember(ctx, pod)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(v.Leader).NotTo(Or(Equal(oldLeaderID), Equal("0"), BeEmpty()), "%s's leader", name)
			}
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
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
		Eventually(func(g Gomega) {
			after := checkEtcdReady(ctx, g, cluster, 3, version)
			g.Expect(after.memberIDs()).To(ConsistOf(before.memberIDs()))
			g.Expect(after.leader()).NotTo(BeEmpty())
			v, err := askMember(ctx, leader)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(v.Leader).NotTo(Or(Equal(v.Header.MemberID), Equal("0")), "the old leader follows")
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		Expect(restartsSince(runs, memberRuns(ctx, cluster))).To(BeZero(), "a partition restarts no member")
		traffic.stopAndCheck(ctx)
	}, SpecTimeout(8*time.Minute))
})
