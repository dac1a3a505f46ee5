//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash"
	"net"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/e2e/robustness"
)

// etcdStatus is the part of an EtcdCluster's status these specs read.
type etcdStatus struct {
	ObservedGeneration int64  `json:"observedGeneration"`
	ReadyMembers       int32  `json:"readyMembers"`
	CurrentVersion     string `json:"currentVersion"`
	LeaderID           string `json:"leaderID"`
	Members            []struct {
		Name    string `json:"name"`
		ID      string `json:"id"`
		Ready   bool   `json:"ready"`
		Learner bool   `json:"learner"`
		DBSize  int64  `json:"dbSize"`
		// LastDefragmentTime is when the operator last defragmented the member.
		LastDefragmentTime *metav1.Time `json:"lastDefragmentTime"`
	} `json:"members"`
	Defragmentation struct {
		Last struct {
			Member string `json:"member"`
			Leader bool   `json:"leader"`
		} `json:"last"`
	} `json:"defragmentation"`
	TLS struct {
		Secret       string `json:"secret"`
		ClientSecret string `json:"clientSecret"`
	} `json:"tls"`
	Conditions []struct {
		Type               string      `json:"type"`
		Status             string      `json:"status"`
		Reason             string      `json:"reason"`
		Message            string      `json:"message"`
		LastTransitionTime metav1.Time `json:"lastTransitionTime"`
		ObservedGeneration int64       `json:"observedGeneration"`
	} `json:"conditions"`
}

func (s etcdStatus) condition(condType string) string {
	for _, c := range s.Conditions {
		if c.Type == condType {
			return c.Status
		}
	}
	return ""
}

func (s etcdStatus) reason(condType string) string {
	for _, c := range s.Conditions {
		if c.Type == condType {
			return c.Reason
		}
	}
	return ""
}

func (s etcdStatus) message(condType string) string {
	for _, c := range s.Conditions {
		if c.Type == condType {
			return c.Message
		}
	}
	return ""
}

func (s etcdStatus) memberIDs() []string {
	ids := make([]string, 0, len(s.Members))
	for _, m := range s.Members {
		ids = append(ids, m.ID)
	}
	return ids
}

// leader is the name of the leader member.
func (s etcdStatus) leader() string {
	for _, m := range s.Members {
		if m.ID == s.LeaderID {
			return m.Name
		}
	}
	return ""
}

func getEtcdStatus(ctx context.Context, g Gomega, c *unstructured.Unstructured) etcdStatus {
	return getStatus[etcdStatus](ctx, g, c)
}

// getStatus reads o again and decodes the part of its status that S declares.
func getStatus[S any](ctx context.Context, g Gomega, o *unstructured.Unstructured) S {
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
	raw, err := json.Marshal(o.Object["status"])
	g.Expect(err).NotTo(HaveOccurred())
	var s S
	g.Expect(json.Unmarshal(raw, &s)).To(Succeed())
	return s
}

// expectEtcdReady waits until checkEtcdReady passes.
func expectEtcdReady(ctx context.Context, c *unstructured.Unstructured, size int, version string) etcdStatus {
	var s etcdStatus
	Eventually(func(g Gomega) {
		s = checkEtcdReady(ctx, g, c, size, version)
	}).WithContext(ctx).WithTimeout(4 * time.Minute).Should(Succeed())
	return s
}

// checkEtcdReady asserts that the cluster has size ready voting members with IDs, a leader,
// and the version, with Available and Ready True for the current generation.
func checkEtcdReady(ctx context.Context, g Gomega, c *unstructured.Unstructured, size int, version string) etcdStatus {
	s := getEtcdStatus(ctx, g, c)
	for _, t := range []string{"Available", "Ready"} { // the reasons, messages and members say why not, when it times out
		g.Expect(s.condition(t)).To(Equal("True"), "%s: %s: %s (Degraded %s: %s: %s; members %+v)", t, s.reason(t), s.message(t),
			s.condition("Degraded"), s.reason("Degraded"), s.message("Degraded"), s.Members)
	}
	for _, cond := range s.Conditions {
		g.Expect(cond.ObservedGeneration).To(Equal(c.GetGeneration()), "condition %s", cond.Type)
	}
	g.Expect(s.Members).To(HaveLen(size))
	for _, m := range s.Members {
		g.Expect(m.ID).NotTo(BeEmpty())
		g.Expect(m.Ready).To(BeTrue(), "member %s", m.Name)
		g.Expect(m.Learner).To(BeFalse(), "member %s", m.Name)
	}
	g.Expect(s.memberIDs()).To(ContainElement(s.LeaderID))
	g.Expect(s.CurrentVersion).To(Equal(version))
	return s
}

// etcdClientURL is the cluster's client Service, reached on its ClusterIP from this host.
func etcdClientURL(ctx context.Context, c *unstructured.Unstructured) string {
	svc := &corev1.Service{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: c.GetNamespace(), Name: c.GetName() + "-client"}, svc)).To(Succeed())
	return fmt.Sprintf("http://%s:2379", svc.Spec.ClusterIP)
}

// etcdCall posts a request to etcd's JSON gateway (/v3/kv/...) and decodes the answer.
func etcdCall(ctx context.Context, url string, request, answer any) error {
	body, err := json.Marshal(request)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(answer)
}

func etcdPut(ctx context.Context, endpoint, key, value string) error {
	b64 := base64.StdEncoding.EncodeToString
	return etcdCall(ctx, endpoint+"/v3/kv/put", map[string]string{"key": b64([]byte(key)), "value": b64([]byte(value))}, &map[string]any{})
}

func etcdGet(ctx context.Context, endpoint, key string) (string, error) {
	return etcdRange(ctx, endpoint, key, false)
}

// etcdGetLocal reads key from the member at endpoint's own copy (a serializable read), without
// asking the leader.
func etcdGetLocal(ctx context.Context, endpoint, key string) (string, error) {
	return etcdRange(ctx, endpoint, key, true)
}

func etcdRange(ctx context.Context, endpoint, key string, serializable bool) (string, error) {
	var answer struct {
		Kvs []struct {
			Value string `json:"value"`
		} `json:"kvs"`
	}
	request := map[string]any{"key": base64.StdEncoding.EncodeToString([]byte(key)), "serializable": serializable}
	if err := etcdCall(ctx, endpoint+"/v3/kv/range", request, &answer); err != nil {
		return "", err
	}
	if len(answer.Kvs) != 1 {
		return "", fmt.Errorf("key %q not found", key)
	}
	value, err := base64.StdEncoding.DecodeString(answer.Kvs[0].Value)
	return string(value), err
}

// robustnessScenario marks the specs that run robustness traffic: make robustness runs them.
var robustnessScenario = Label("robustness")

// faultKeys is how many keys each fault spec writes before its fault and reads back after.
const faultKeys = 30

func faultKey(prefix string, i int) (string, string) {
	return fmt.Sprintf("%s/%03d", prefix, i), fmt.Sprintf("value %d of %s", i, prefix)
}

// writeEtcdKeys puts faultKeys keys under prefix before a fault.
func writeEtcdKeys(ctx context.Context, endpoint, prefix string) {
	for i := range faultKeys {
		k, v := faultKey(prefix, i)
		Eventually(func() error { return etcdPut(ctx, endpoint, k, v) }).WithContext(ctx).Should(Succeed())
	}
}

// expectEtcdKeys reads back the first written keys put under prefix (by writeEtcdKeys or
// writeEtcdKeysUntil), and reports the count and a checksum of what was written and read.
func expectEtcdKeys(ctx context.Context, endpoint, prefix string, written int) {
	want, read := sha256.New(), sha256.New()
	n := 0
	for i := range written {
		k, v := faultKey(prefix, i)
		// A member that has just come back may answer 503 for a moment: that is retried; a
		// key that is not there is not.
		var got string
		Eventually(func() error {
			var err error
			if got, err = etcdGet(ctx, endpoint, k); err != nil && strings.Contains(err.Error(), "not found") {
				return StopTrying("an acknowledged key is gone").Wrap(err)
			}
			return err
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		_, _ = fmt.Fprintf(want, "%s=%s\n", k, v)
		_, _ = fmt.Fprintf(read, "%s=%s\n", k, got)
		n++
	}
	sum := func(h hash.Hash) string { return fmt.Sprintf("%x", h.Sum(nil))[:12] }
	By(fmt.Sprintf("keys written %d, read back %d; checksum written %s, read %s", written, n, sum(want), sum(read)))
	Expect(sum(read)).To(Equal(sum(want)))
}

// writeEtcdKeysUntil puts keys under prefix, one after another, until stop is closed, and
// sends how many etcd acknowledged. A put that fails (the member behind the Service is
// restarting, the leader changes) is tried again until etcd acknowledges it.
func writeEtcdKeysUntil(ctx context.Context, endpoint, prefix string, stop <-chan struct{}, acked chan<- int) {
	defer GinkgoRecover()
	n := 0
	for {
		select {
		case <-stop:
			acked <- n
			return
		default:
		}
		k, v := faultKey(prefix, n)
		if err := etcdPut(ctx, endpoint, k, v); err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		n++
	}
}

// claimNames are the names of the cluster's volume claims.
func claimNames(ctx context.Context, g Gomega, cluster *unstructured.Unstructured) []string {
	claims := &corev1.PersistentVolumeClaimList{}
	g.Expect(k8sClient.List(ctx, claims, client.InNamespace(cluster.GetNamespace()), client.MatchingLabels{"etcd_cluster": cluster.GetName()})).To(Succeed())
	names := make([]string, 0, len(claims.Items))
	for _, c := range claims.Items {
		names = append(names, c.Name)
	}
	return names
}

// claimsOf are the names of the volume claims of a cluster of size members.
func claimsOf(cluster *unstructured.Unstructured, size int) []string {
	names := make([]string, size)
	for i := range names {
		names[i] = fmt.Sprintf("data-%s-%d", cluster.GetName(), i)
	}
	return names
}

// etcdMemberCount waits until etcd lists size members, and returns their IDs as status
// writes them.
func etcdMemberCount(ctx context.Context, members *clientv3.Client, size int) []string {
	var ids []string
	Eventually(func(g Gomega) {
		list, err := members.MemberList(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		ids = ids[:0]
		for _, m := range list.Members {
			ids = append(ids, fmt.Sprintf("%x", m.ID))
		}
		g.Expect(ids).To(HaveLen(size))
	}).WithContext(ctx).Should(Succeed())
	return ids
}

// etcdMemberIPs are the IPs of the cluster's member pods.
func etcdMemberIPs(ctx context.Context, g Gomega, cluster *unstructured.Unstructured) []string {
	pods := &corev1.PodList{}
	g.Expect(k8sClient.List(ctx, pods, client.InNamespace(cluster.GetNamespace()), client.MatchingLabels{"etcd_cluster": cluster.GetName()})).To(Succeed())
	ips := make([]string, 0, len(pods.Items))
	for _, p := range pods.Items {
		g.Expect(p.Status.PodIP).NotTo(BeEmpty(), "pod %s's IP", p.Name)
		ips = append(ips, p.Status.PodIP)
	}
	return ips
}

func scaleEtcd(ctx context.Context, c *unstructured.Unstructured, size int) {
	patchEtcdSpec(ctx, c, fmt.Sprintf(`{"spec":{"size":%d}}`, size))
}

func patchEtcdSpec(ctx context.Context, c *unstructured.Unstructured, patch string) {
	Expect(k8sClient.Patch(ctx, c, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

// enoughRealNodesToSpread says whether the cluster has a real node for each of 3 members.
func enoughRealNodesToSpread(ctx context.Context) bool {
	return len(realNodeNames(ctx)) >= 3
}

// memberNodes are the distinct nodes a cluster's member pods run on.
func memberNodes(ctx context.Context, cluster *unstructured.Unstructured) map[string]bool {
	pods := &corev1.PodList{}
	Expect(k8sClient.List(ctx, pods, client.InNamespace(cluster.GetNamespace()), client.MatchingLabels{"etcd_cluster": cluster.GetName()})).To(Succeed())
	nodes := map[string]bool{}
	for _, p := range pods.Items {
		nodes[p.Spec.NodeName] = true
	}
	return nodes
}

// harnessEtcdCluster is a 3-member EtcdCluster on the real nodes that the robustness harness
// may run against (robustness.NamePrefix and its label), with spec.TLS when tlsSpec is not nil.
func harnessEtcdCluster(ns, name, version string, tlsSpec map[string]any) *unstructured.Unstructured {
	spec := map[string]any{"size": int64(3), "version": version, "repository": requiredEnv("E2E_IMAGES") + "/etcd", "pod": realNodePlacement()}
	if tlsSpec != nil {
		spec["TLS"] = tlsSpec
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "etcd.database.coreos.com/v1beta2", "kind": "EtcdCluster",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{robustness.HarnessLabel: "true"}},
		"spec":     spec,
	}}
}

// SpecPriority(1): its specs take the longest of all, so they start first, beside the TLS
// clusters' (etcd_tls_test.go).
var _ = Describe("The etcd-cluster operator on the real nodes", Ordered, SpecPriority(1), func() {
	const key, value = "/here", "written before scaling"
	var (
		cluster           *unstructured.Unstructured
		endpoint          string
		previous, current string // the etcd versions the upgrade goes between
	)

	BeforeAll(func(ctx SpecContext) {
		requireRealNode(ctx)
		previous, current = requiredEnv("E2E_ETCD_PREVIOUS_VERSION"), requiredEnv("E2E_ETCD_VERSION")
		ns := createNamespace(ctx, "etcd-real", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
		deployOperatorOnRealNode(ctx, "etcd-cluster", ns)

		cluster = harnessEtcdCluster(ns, robustness.NamePrefix, previous, nil)
		Expect(k8sClient.Create(ctx, cluster)).To(Succeed())
	})

	AfterEach(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			dumpForFailure(ctx, "etcd-real", cluster.GetNamespace(), etcdManagerNamespace)
		}
	})

	It("runs real members: Available and Ready, with member IDs and a leader", func(ctx SpecContext) {
		s := expectEtcdReady(ctx, cluster, 3, previous)
		AddReportEntry(timeToReadyEntry, "plaintext "+timeToReady(ctx, cluster).Round(time.Second).String())
		By(fmt.Sprintf("members %v, leader %s", s.memberIDs(), s.LeaderID))
		pods := &corev1.PodList{}
		Expect(k8sClient.List(ctx, pods, client.InNamespace(cluster.GetNamespace()), client.MatchingLabels{"etcd_cluster": cluster.GetName()})).To(Succeed())
		Expect(pods.Items).To(HaveLen(3))
		for _, p := range pods.Items {
			Expect(p.Spec.NodeName).To(beARealNode(), p.Name)
		}
		if enoughRealNodesToSpread(ctx) {
			By("antiAffinity Preferred (the default) spreads the members over three real nodes")
			Expect(memberNodes(ctx, cluster)).To(HaveLen(3))
		}
	})

	It("keeps a key written through the client Service across scale 3 → 5 → 3", robustnessScenario, func(ctx SpecContext) {
		expectEtcdReady(ctx, cluster, 3, previous)
		endpoint = etcdClientURL(ctx, cluster)
		Eventually(func() error { return etcdPut(ctx, endpoint, key, value) }).WithContext(ctx).Should(Succeed())
		traffic := startEtcdTraffic(ctx, cluster, "scale-3-5-3")

		scaleEtcd(ctx, cluster, 5)
		five := expectEtcdReady(ctx, cluster, 5, previous)
		scaleEtcd(ctx, cluster, 3)
		three := expectEtcdReady(ctx, cluster, 3, previous)
		Expect(five.memberIDs()).To(ContainElements(three.memberIDs()), "scaling in removes members, it does not replace them")
		Eventually(func(g Gomega) {
			g.Expect(claimNames(ctx, g, cluster)).To(ConsistOf(claimsOf(cluster, 3)), "the volumes of the members removed go with them")
		}).WithContext(ctx).Should(Succeed())

		Eventually(func() (string, error) { return etcdGet(ctx, endpoint, key) }).WithContext(ctx).Should(Equal(value))
		traffic.stopAndCheck(ctx)
	})

	It("defragments members with free pages one at a time, followers first and the leader last, under traffic, with no failed request", robustnessScenario, func(ctx SpecContext) {
		expectEtcdReady(ctx, cluster, 3, previous)
		c := etcdTLSClient(ctx, cluster, nil)
		// Automatic defragmentation is held off while the free pages are made, so that every
		// defragmentation counted below is one of the three the lower threshold starts, in one
		// order; earlier ones (of earlier traffic) are told apart by their times.
		patchEtcdSpec(ctx, cluster, `{"spec":{"defragmentation":{"freePercent":50,"minDBSize":"8Gi"}}}`)
		Eventually(func(g Gomega) {
			g.Expect(getEtcdStatus(ctx, g, cluster).ObservedGeneration).To(Equal(cluster.GetGeneration()), "the operator holds defragmentation off")
		}).WithContext(ctx).Should(Succeed())
		before := map[string]time.Time{}
		for _, m := range getEtcdStatus(ctx, Default, cluster).Members {
			if m.LastDefragmentTime != nil {
				before[m.Name] = m.LastDefragmentTime.Time
			}
		}
		By("writing 24 MiB, deleting it and compacting: the members' databases keep their size, most of it free pages")
		value := strings.Repeat("d", 512<<10)
		for i := range 48 {
			_, err := c.Put(ctx, fmt.Sprintf("/defrag/%02d", i), value)
			Expect(err).NotTo(HaveOccurred())
		}
		deleted, err := c.Delete(ctx, "/defrag/", clientv3.WithPrefix())
		Expect(err).NotTo(HaveOccurred())
		_, err = c.Compact(ctx, deleted.Header.Revision, clientv3.WithCompactPhysical())
		Expect(err).NotTo(HaveOccurred())
		// A member being defragmented answers nothing until it is done (0.35 s for 410 MiB in
		// make bench-etcd-backup, longer on a loaded machine): the requests that reach it wait,
		// as a client with a usual deadline (10 s) waits, and none may fail.
		traffic := startEtcdTrafficWithin(ctx, cluster, "defragmentation", 10*time.Second)
		// A member's compacted pages count as free only once a later write commits on it (bbolt
		// releases them then), at a different time on each member: the hold is lifted once every
		// member is past the lower threshold, so that the order is the operator's choice alone.
		Eventually(func(g Gomega) {
			for _, ip := range etcdMemberIPs(ctx, g, cluster) {
				st, err := c.Status(ctx, net.JoinHostPort(ip, "2379"))
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(st.DbSize).To(BeNumerically(">=", 16<<20), "member %s's database", ip)
				g.Expect((st.DbSize-st.DbSizeInUse)*2).To(BeNumerically(">=", st.DbSize), "member %s's free pages", ip)
			}
		}).WithContext(ctx).Should(Succeed())
		patchEtcdSpec(ctx, cluster, `{"spec":{"defragmentation":{"freePercent":50,"minDBSize":"16Mi"}}}`)
		var after etcdStatus
		Eventually(func(g Gomega) {
			after = getEtcdStatus(ctx, g, cluster)
			for _, m := range after.Members {
				g.Expect(m.LastDefragmentTime).NotTo(BeNil(), "member %s defragmented", m.Name)
				g.Expect(m.LastDefragmentTime.Time).To(BeTemporally(">", before[m.Name]), "member %s defragmented again", m.Name)
			}
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		row := traffic.stopAndCheck(ctx)
		// A timeout is an unknown outcome, not a failure (as in every scenario; a minute of
		// traffic sees one or two anywhere): what must not happen is a request refused.
		Expect(row.Report.Failed).To(BeZero(), "no client request failed during the defragmentations: %s", row)

		By("followers first, the leader last, each database smaller")
		for _, m := range after.Members {
			Expect(m.DBSize).To(BeNumerically("<", 16<<20), "member %s's database after", m.Name)
		}
		// The leader as the operator saw it when it chose (defragmenting the leader may move
		// the leadership: it answers nothing meanwhile).
		Expect(after.Defragmentation.Last.Leader).To(BeTrue(), "the leader is defragmented last: %+v", after.Defragmentation.Last)
		patchEtcdSpec(ctx, cluster, `{"spec":{"defragmentation":{"freePercent":50,"minDBSize":"64Mi"}}}`)
	})

	It("replaces a member whose pod and data are lost, with a new member ID", robustnessScenario, func(ctx SpecContext) {
		before := expectEtcdReady(ctx, cluster, 3, previous)
		writeEtcdKeys(ctx, endpoint, "/lost-volume")
		traffic := startEtcdTraffic(ctx, cluster, "member-replaced-after-volume-loss")
		victim := cluster.GetName() + "-2"
		By("deleting pod " + victim + " and its volume claim")
		ns := cluster.GetNamespace()
		pvc := &corev1.PersistentVolumeClaim{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "data-" + victim}, pvc)).To(Succeed())
		Expect(k8sClient.Delete(ctx, pvc)).To(Succeed())
		pod := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: victim}, pod)).To(Succeed())
		Expect(k8sClient.Delete(ctx, pod)).To(Succeed())

		Eventually(func(g Gomega) {
			after := checkEtcdReady(ctx, g, cluster, 3, previous)
			var oldID, newID string
			for _, m := range before.Members {
				if m.Name == victim {
					oldID = m.ID
				}
			}
			for _, m := range after.Members {
				if m.Name == victim {
					newID = m.ID
				}
			}
			g.Expect(newID).NotTo(BeEmpty())
			g.Expect(newID).NotTo(Equal(oldID), "the lost member comes back as a new member")
		}).WithContext(ctx).WithTimeout(4 * time.Minute).Should(Succeed())
		Expect(etcdGet(ctx, endpoint, key)).To(Equal(value))
		expectEtcdKeys(ctx, endpoint, "/lost-volume", faultKeys)
		traffic.stopAndCheck(ctx)
	})

	It("keeps every acknowledged write and a linearizable history while the leader's pod and then another member's are killed under traffic", robustnessScenario, func(ctx SpecContext) {
		before := expectEtcdReady(ctx, cluster, 3, previous)
		stop, acked := make(chan struct{}), make(chan int, 1)
		go writeEtcdKeysUntil(ctx, endpoint, "/killed-pods", stop, acked)
		traffic := startEtcdTraffic(ctx, cluster, "leader-and-member-pods-deleted")
		leader := before.leader()
		Expect(leader).NotTo(BeEmpty())
		follower := cluster.GetName() + "-0"
		if leader == follower {
			follower = cluster.GetName() + "-1"
		}
		for _, victim := range []string{leader, follower} {
			By("killing pod " + victim + " while keys are written")
			pod := &corev1.Pod{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: cluster.GetNamespace(), Name: victim}, pod)).To(Succeed())
			killed := pod.UID
			Expect(k8sClient.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
			Eventually(func(g Gomega) {
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
				g.Expect(pod.UID).NotTo(Equal(killed), "the StatefulSet made the pod again")
				g.Expect(podReady(pod)).To(BeTrue())
				after := checkEtcdReady(ctx, g, cluster, 3, previous)
				g.Expect(after.memberIDs()).To(ConsistOf(before.memberIDs()), "a killed pod is the same member again, on its data")
			}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		}
		close(stop)
		written := <-acked
		Expect(written).To(BeNumerically(">", 0))
		expectEtcdKeys(ctx, endpoint, "/killed-pods", written)
		traffic.stopAndCheck(ctx)
	}, SpecTimeout(8*time.Minute))

	It("keeps every acknowledged write and a linearizable history while the leader's etcd process is killed with SIGKILL inside its pod", robustnessScenario, func(ctx SpecContext) {
		before := expectEtcdReady(ctx, cluster, 3, previous)
		traffic := startEtcdTraffic(ctx, cluster, "leader-etcd-process-killed")
		pod := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: cluster.GetNamespace(), Name: before.leader()}, pod)).To(Succeed())
		restarts := containerRestarts(pod)
		By("killing etcd in pod " + pod.Name + " on " + pod.Spec.NodeName + " with SIGKILL")
		killEtcdProcess(pod)
		Eventually(func(g Gomega) {
			now := &corev1.Pod{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), now)).To(Succeed())
			g.Expect(now.UID).To(Equal(pod.UID), "the same pod")
			g.Expect(containerRestarts(now)).To(Equal(restarts+1), "the kubelet started etcd again in it")
			g.Expect(podReady(now)).To(BeTrue())
			after := checkEtcdReady(ctx, g, cluster, 3, previous)
			g.Expect(after.memberIDs()).To(ConsistOf(before.memberIDs()), "the same member again, on its data")
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		traffic.stopAndCheck(ctx)
	}, SpecTimeout(6*time.Minute))

	It("finishes a membership change whose manager was killed in the middle: after a member's add, before its pod; after a member's removal, before its pod goes", robustnessScenario, func(ctx SpecContext) {
		before := expectEtcdReady(ctx, cluster, 3, previous)
		members := etcdTLSClient(ctx, cluster, nil)
		traffic := startEtcdTraffic(ctx, cluster, "manager-killed-mid-membership-change")

		By("growing to 4 members while the StatefulSet is held at 3 replicas")
		release := holdScale(ctx, cluster)
		scaleEtcd(ctx, cluster, 4)
		added := etcdMemberCount(ctx, members, 4)
		Expect(*etcdStatefulSet(ctx, Default, cluster).Spec.Replicas).To(BeEquivalentTo(3), "the new member's pod is not made yet")
		killEtcdManager(ctx)
		release(ctx)
		four := expectEtcdReady(ctx, cluster, 4, previous)
		Expect(four.memberIDs()).To(ConsistOf(added), "the next manager started the member added, and added no other")

		By("shrinking to 3 members while the StatefulSet is held at 4 replicas")
		release = holdScale(ctx, cluster)
		scaleEtcd(ctx, cluster, 3)
		Expect(etcdMemberCount(ctx, members, 3)).To(ConsistOf(before.memberIDs()), "the member removed is the one added")
		Expect(*etcdStatefulSet(ctx, Default, cluster).Spec.Replicas).To(BeEquivalentTo(4), "the removed member's pod is not deleted yet")
		killEtcdManager(ctx)
		release(ctx)
		three := expectEtcdReady(ctx, cluster, 3, previous)
		Expect(three.memberIDs()).To(ConsistOf(before.memberIDs()))
		Eventually(func(g Gomega) {
			g.Expect(*etcdStatefulSet(ctx, g, cluster).Spec.Replicas).To(BeEquivalentTo(3))
			g.Expect(claimNames(ctx, g, cluster)).To(ConsistOf(claimsOf(cluster, 3)), "the removed member's volume goes with it")
		}).WithContext(ctx).Should(Succeed())
		traffic.stopAndCheck(ctx)
	}, SpecTimeout(10*time.Minute))

	It("holds a spec its members cannot start with: the failing member keeps its ID and data, and a revert brings it back", func(ctx SpecContext) {
		before := expectEtcdReady(ctx, cluster, 3, previous)
		writeEtcdKeys(ctx, endpoint, "/failing-spec")
		By("giving etcd a flag value it refuses at start")
		patchEtcdSpec(ctx, cluster, `{"spec":{"pod":{"etcdArgs":["--quota-backend-bytes=lots"]}}}`)
		Eventually(func(g Gomega) {
			s := getEtcdStatus(ctx, g, cluster)
			g.Expect(s.reason("Degraded")).To(Equal("MemberFailing"))
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		By("staying as it is: the other members run on, nobody is replaced")
		Consistently(func(g Gomega) {
			s := getEtcdStatus(ctx, g, cluster)
			g.Expect(s.memberIDs()).To(ConsistOf(before.memberIDs()))
			g.Expect(s.ReadyMembers).To(BeEquivalentTo(2))
			g.Expect(etcdGet(ctx, endpoint, key)).To(Equal(value))
		}).WithContext(ctx).WithTimeout(20 * time.Second).WithPolling(2 * time.Second).Should(Succeed())

		By("reverting the spec")
		patchEtcdSpec(ctx, cluster, `{"spec":{"pod":{"etcdArgs":null}}}`)
		after := expectEtcdReady(ctx, cluster, 3, previous)
		Expect(after.memberIDs()).To(ConsistOf(before.memberIDs()), "the member came back as itself, with its data")
		expectEtcdKeys(ctx, endpoint, "/failing-spec", faultKeys)
	}, SpecTimeout(6*time.Minute))

	It("makes a deleted StatefulSet again and restarts every member on its volume", func(ctx SpecContext) {
		before := expectEtcdReady(ctx, cluster, 3, previous)
		writeEtcdKeys(ctx, endpoint, "/deleted-statefulset")
		sts := &appsv1.StatefulSet{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(cluster), sts)).To(Succeed())
		uid := sts.UID
		By("deleting the StatefulSet and, with it, every member pod")
		Expect(k8sClient.Delete(ctx, sts, client.PropagationPolicy(metav1.DeletePropagationForeground))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(cluster), sts)).To(Succeed())
			g.Expect(sts.UID).NotTo(Equal(uid))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		Expect(*sts.Spec.Replicas).To(BeEquivalentTo(3), "made again for the three volumes, not as a new one-member cluster")
		after := expectEtcdReady(ctx, cluster, 3, previous)
		Expect(after.memberIDs()).To(ConsistOf(before.memberIDs()), "the members restarted on their data")
		expectEtcdKeys(ctx, endpoint, "/deleted-statefulset", faultKeys)
	}, SpecTimeout(6*time.Minute))

	It("upgrades one member at a time, never below quorum, and keeps the data", robustnessScenario, func(ctx SpecContext) {
		expectEtcdReady(ctx, cluster, 3, previous)
		scenario := "etcd-upgrade-" + previous + "-to-" + current
		watch := newRestartWatch(ctx, cluster, 3)
		traffic := startEtcdTraffic(ctx, cluster, scenario)
		traffic.watch = watch
		patchEtcdSpec(ctx, cluster, fmt.Sprintf(`{"spec":{"version":%q}}`, current))

		By("watching the members while they roll from " + previous + " to " + current)
		for done := false; !done; time.Sleep(200 * time.Millisecond) {
			Expect(ctx.Err()).NotTo(HaveOccurred())
			down := watch.observe(ctx)
			Expect(down).To(BeNumerically("<=", 1), "more than one member down at once during the upgrade: %s", watch.describe())
			upgraded := 0
			for _, p := range watch.last.Items {
				if strings.HasSuffix(p.Spec.Containers[0].Image, ":v"+current) {
					upgraded++
				}
			}
			done = upgraded == 3 && down == 0 && len(watch.last.Items) == 3
		}
		watch.report(scenario)
		expectEtcdReady(ctx, cluster, 3, current)
		Expect(etcdGet(ctx, endpoint, key)).To(Equal(value))
		traffic.stopAndCheck(ctx)
	}, SpecTimeout(6*time.Minute))
})
