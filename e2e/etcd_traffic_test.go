//go:build e2e

package e2e

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive // ginkgo's DSL
	. "github.com/onsi/gomega"    //nolint:revive // gomega's DSL
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/e2e/robustness"
)

// robustnessEntry names the report entry each scenario's figures go in.
const robustnessEntry = "robustness"

// etcdTraffic is robustness traffic running against an etcd cluster's client Service: three
// clients doing puts, gets, deletes, compare-and-swaps and ranges on ten keys, each at most
// 50 operations a second (the machine runs the other specs meanwhile), every operation
// recorded, until stopAndCheck checks the history.
type etcdTraffic struct {
	scenario string
	cluster  *unstructured.Unstructured
	started  time.Time
	members  map[string]memberRun // the members' pods when the traffic started
	ids      []string             // the members' IDs when the traffic started
	traffic  robustness.Traffic
	history  *robustness.History
	cancel   context.CancelFunc
	done     chan struct{}
	// watch, when a spec follows the members with one, counts the restarts: it sees a pod
	// made again more than once, which two readings of the pods do not.
	watch *restartWatch
}

// startEtcdTraffic starts the traffic of scenario on the cluster's client Service, on the keys
// under /robustness/<scenario>/, each request given 2 s. It refuses a cluster the harness did
// not make.
func startEtcdTraffic(ctx context.Context, cluster *unstructured.Unstructured, scenario string) *etcdTraffic {
	return startEtcdTrafficWithin(ctx, cluster, scenario, 2*time.Second)
}

// startEtcdTrafficWithin is startEtcdTraffic with each request given timeout.
func startEtcdTrafficWithin(ctx context.Context, cluster *unstructured.Unstructured, scenario string, timeout time.Duration) *etcdTraffic {
	endpoint := strings.TrimPrefix(etcdClientURL(ctx, cluster), "http://")
	local, err := robustness.LocalAddresses()
	Expect(err).NotTo(HaveOccurred())
	target := robustness.Target{APIServer: cfg.Host, Local: local, Name: cluster.GetName(), Labels: cluster.GetLabels(), Endpoint: endpoint}
	Expect(target.Refusal()).NotTo(HaveOccurred(), "the robustness harness runs only against what it made")
	t := &etcdTraffic{scenario: scenario, cluster: cluster, members: memberRuns(ctx, cluster), ids: getEtcdStatus(ctx, Default, cluster.DeepCopy()).memberIDs(),
		traffic: robustness.Traffic{Prefix: "/robustness/" + scenario + "/", Keys: 10, Timeout: timeout, Interval: 20 * time.Millisecond},
		history: robustness.NewHistory(), done: make(chan struct{})}
	tlsConfig := followingClientTLS(ctx, cluster) // the traffic follows a rotation onto a new CA
	for range 3 {
		t.traffic.Clients = append(t.traffic.Clients, etcdTLSClient(ctx, cluster, tlsConfig))
	}
	var trafficCtx context.Context
	trafficCtx, t.cancel = context.WithCancel(context.WithoutCancel(ctx))
	t.started = time.Now()
	go func() {
		defer close(t.done)
		t.traffic.Run(trafficCtx, t.history)
	}()
	return t
}

// robustnessTraffic is the least time each scenario's traffic runs ($E2E_ROBUSTNESS_TRAFFIC,
// a Go duration): none by default, so a scenario's traffic lasts as long as its fault does;
// make robustness sets a minute.
func robustnessTraffic() time.Duration {
	v := os.Getenv("E2E_ROBUSTNESS_TRAFFIC")
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	Expect(err).NotTo(HaveOccurred(), "E2E_ROBUSTNESS_TRAFFIC")
	return d
}

// stopAndCheck lets the traffic run its least time, stops it, reads the final state, and
// fails unless the history is linearizable with no acknowledged write lost; a failed check
// leaves the history and porcupine's visualization in the log folder, under
// robustness/<scenario>. The scenario's figures go in a report entry, for the table, and are
// returned.
func (t *etcdTraffic) stopAndCheck(ctx context.Context) robustness.Row {
	if rest := robustnessTraffic() - time.Since(t.started); rest > 0 {
		By(fmt.Sprintf("letting the traffic run %s more", rest.Round(time.Second)))
		select {
		case <-ctx.Done():
		case <-time.After(rest):
		}
	}
	t.cancel()
	<-t.done
	var final map[string]string
	Eventually(func() (err error) {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		final, err = t.traffic.State(rctx, t.traffic.Clients[0])
		return err
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	ops := t.history.Ops()
	restarts := restartsSince(t.members, memberRuns(ctx, t.cluster))
	if t.watch != nil {
		t.watch.observe(ctx)
		restarts = t.watch.restarts()
	}
	status := getEtcdStatus(ctx, Default, t.cluster.DeepCopy())
	row := robustness.Row{Scenario: t.scenario, Traffic: time.Since(t.started),
		Report: robustness.Check(ops, t.traffic.KeySpace(), final, 2*time.Minute), Restarts: restarts, Replacements: gone(t.ids, status.memberIDs())}
	AddReportEntry(robustnessEntry, row)
	AddReportEntry("traffic", fmt.Sprintf("%s: the members that answered each client, and when: %s",
		t.scenario, row.Report.AnswersText(memberNamer(status))))
	if !row.Report.OK() {
		dir := filepath.Join(logDir(), "robustness", t.scenario)
		Expect(row.Report.WriteEvidence(dir, ops)).To(Succeed())
		Fail(fmt.Sprintf("%s; lost %v; stale %v; history and visualization in %s", row, row.Report.Lost, row.Report.StaleReads, dir))
	}
	Expect(row.Report.Acknowledged).To(BeNumerically(">", 0), "the traffic ran")
	return row
}

// gone counts the IDs of before that now no longer lists: the members replaced.
func gone(before, now []string) int {
	n := 0
	for _, id := range before {
		if !slices.Contains(now, id) {
			n++
		}
	}
	return n
}

// memberNamer names a member ID by a cluster's status (in hexadecimal when the status does
// not list it).
func memberNamer(status etcdStatus) func(uint64) string {
	names := map[string]string{}
	for _, m := range status.Members {
		names[m.ID] = m.Name
	}
	return func(id uint64) string {
		hex := strconv.FormatUint(id, 16)
		return cmp.Or(names[hex], hex)
	}
}

// memberRun is one incarnation of a member's pod: its UID and its container restarts.
type memberRun struct {
	uid      types.UID
	restarts int32
}

// memberRuns reads the cluster's member pods by name.
func memberRuns(ctx context.Context, cluster *unstructured.Unstructured) map[string]memberRun {
	pods := &corev1.PodList{}
	Expect(k8sClient.List(ctx, pods, client.InNamespace(cluster.GetNamespace()), client.MatchingLabels{"etcd_cluster": cluster.GetName()})).To(Succeed())
	runs := map[string]memberRun{}
	for _, p := range pods.Items {
		runs[p.Name] = memberRun{uid: p.UID, restarts: containerRestarts(&p)}
	}
	return runs
}

// containerRestarts is how often the kubelet restarted the pod's containers.
func containerRestarts(pod *corev1.Pod) int32 {
	n := int32(0)
	for _, s := range pod.Status.ContainerStatuses {
		n += s.RestartCount
	}
	return n
}

// restartsSince counts the member restarts between two readings of the member pods: the
// container restarts, and each pod made again (counted once however often it was). A pod
// that first appears (the cluster grew) is no restart, nor one that went (it shrank).
func restartsSince(before, after map[string]memberRun) int {
	n := 0
	for name, now := range after {
		was, existed := before[name]
		switch {
		case existed && was.uid == now.uid:
			n += int(now.restarts - was.restarts)
		case existed:
			n += 1 + int(now.restarts)
		default:
			n += int(now.restarts)
		}
	}
	return n
}

// The robustness table: every scenario's figures, printed and written to
// robustness/table.txt in the log folder once the suite has run.
var _ = ReportAfterSuite("robustness table", func(report Report) {
	var rows []robustness.Row
	for _, spec := range report.SpecReports {
		for _, entry := range spec.ReportEntries {
			if entry.Name != robustnessEntry {
				continue
			}
			// A spec of this process left the Row itself; another process's came as JSON.
			row, ok := entry.Value.GetRawValue().(robustness.Row)
			if !ok {
				Expect(json.Unmarshal([]byte(entry.Value.AsJSON), &row)).To(Succeed())
			}
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return
	}
	table := robustness.Table(rows)
	dir := filepath.Join(logDir(), "robustness")
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(dir, "table.txt"), []byte(table), 0o644)).To(Succeed())
	_, _ = fmt.Fprintf(GinkgoWriter, "Robustness, one scenario a line (also in %s):\n%s", filepath.Join(dir, "table.txt"), table)
})

// restartWatch follows a cluster's member pods while they restart one at a time. A member is
// down while its pod is being deleted, is missing, or has not been Ready since it was made;
// a pod that was Ready and turns unready (a probe timing out on a busy machine) is not down,
// and is counted apart.
type restartWatch struct {
	cluster             *unstructured.Unstructured
	size                int
	wasReady            map[string]types.UID // the pods Ready once, by name
	maxDown, maxUnready int
	last                *corev1.PodList
	runs                map[string]map[types.UID]*podRun // the incarnations of each member's pod seen, by name
	before              map[types.UID]bool               // the incarnations seen first
}

// podRun is one incarnation of a pod: its container restarts when first and last seen.
type podRun struct{ first, last int32 }

// newRestartWatch reads the member pods before anything restarts, once every one of them is
// Ready: a cluster's status says Ready when its members answer etcd, which can be a probe
// period before the kubelet marks their pods Ready (just after they all restarted, say), and a
// pod not Ready yet would count as down through no doing of what the watch follows.
func newRestartWatch(ctx context.Context, cluster *unstructured.Unstructured, size int) *restartWatch {
	w := &restartWatch{cluster: cluster, size: size, wasReady: map[string]types.UID{}, runs: map[string]map[types.UID]*podRun{}, before: map[types.UID]bool{}}
	Eventually(func(g Gomega) {
		w.observe(ctx)
		ready := 0
		for _, p := range w.last.Items {
			if podReady(&p) && p.DeletionTimestamp == nil {
				ready++
			}
		}
		g.Expect(ready).To(Equal(size), "member pods Ready before anything restarts: %s", w.describe())
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	w.maxDown, w.maxUnready = 0, 0
	for _, p := range w.last.Items {
		w.before[p.UID] = true
	}
	return w
}

// restarts counts the member restarts seen: each pod made again, each container restart.
func (w *restartWatch) restarts() int {
	n := 0
	for _, runs := range w.runs {
		n += len(runs) - 1
		for uid, r := range runs {
			first := r.first
			if !w.before[uid] { // made since: every restart of it counts
				first = 0
			}
			n += int(r.last - first)
		}
	}
	return n
}

// observe reads the pods again and returns how many members are down.
func (w *restartWatch) observe(ctx context.Context) int {
	pods := &corev1.PodList{}
	Expect(k8sClient.List(ctx, pods, client.InNamespace(w.cluster.GetNamespace()), client.MatchingLabels{"etcd_cluster": w.cluster.GetName()})).To(Succeed())
	byName := map[string]*corev1.Pod{}
	for i := range pods.Items {
		p := &pods.Items[i]
		byName[p.Name] = p
		if w.runs[p.Name] == nil {
			w.runs[p.Name] = map[types.UID]*podRun{}
		}
		if r := w.runs[p.Name][p.UID]; r != nil {
			r.last = containerRestarts(p)
		} else {
			w.runs[p.Name][p.UID] = &podRun{first: containerRestarts(p), last: containerRestarts(p)}
		}
	}
	down, unready := 0, 0
	for o := range w.size {
		p, ok := byName[fmt.Sprintf("%s-%d", w.cluster.GetName(), o)]
		switch {
		case !ok || p.DeletionTimestamp != nil:
			down++
		case podReady(p):
			w.wasReady[p.Name] = p.UID
		case w.wasReady[p.Name] == p.UID:
			unready++
		default:
			down++
		}
	}
	w.maxDown, w.maxUnready, w.last = max(w.maxDown, down), max(w.maxUnready, down+unready), pods
	return down
}

// describe says, for the failure message, how each member pod was last seen.
func (w *restartWatch) describe() string {
	states := make([]string, 0, len(w.last.Items))
	for _, p := range w.last.Items {
		state := fmt.Sprintf("%s (%s, Ready %t, %d restarts", p.Name, p.Status.Phase, podReady(&p), containerRestarts(&p))
		if p.DeletionTimestamp != nil {
			state += ", being deleted"
		}
		states = append(states, state+")")
	}
	return fmt.Sprintf("%d pods: %s", len(states), strings.Join(states, "; "))
}

// report adds the most members down, and unready, at once to the spec's report.
func (w *restartWatch) report(what string) {
	AddReportEntry(what+": most members down at once (restarting), and not Ready at once (also probes timing out)",
		fmt.Sprintf("%d down, %d not Ready", w.maxDown, w.maxUnready))
}
