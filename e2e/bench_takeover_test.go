//go:build bench

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The takeover benchmark's two managers' metrics addresses, and how long the one left may take
// to lead (the target, with client-go's default lease of 15 s).
var takeoverMetrics = []string{"127.0.0.1:18080", "127.0.0.1:18081"}

const takeoverTarget = 20 * time.Second

// takeoverRun is one operator's run with one replica, or with two whose leader is killed.
type takeoverRun struct {
	operator  string
	objects   int
	replicas  int
	toSettled time.Duration      // creating the objects until every one settled
	takeover  time.Duration      // the leader killed until the other one led
	afterKill time.Duration      // the leader killed until every object settled
	creations map[string]float64 // objects created in the benchmark's namespaces, by group/version/resource
	gone      map[string]float64 // of those the operator makes, how many no longer exist when every object settled
	conflicts map[string]float64 // 409 answers (a create of what exists, a write on a stale version), by verb and resource
}

// TestBenchScaleTakeover runs each operator (BENCH_SCALE_OPERATORS) with
// BENCH_SCALE_TAKEOVER (1000) copies of its sample created at once, twice: one replica, then
// two with leader election, the leader killed (SIGKILL, as a lost node: its lease is not
// released) once half the objects settled. It prints the time until the other replica leads
// and until every object settled, and what the API server created in each run
// (apiserver_request_total: POSTs answered 201, by resource, but the benchmark's own objects,
// namespaces, Events and Leases): the two-replica run must create nothing beyond what the
// one-replica run did. 409 answers (a create of an object that exists, a write on a stale
// version) are printed for both.
func TestBenchScaleTakeover(t *testing.T) {
	ctx := context.Background()
	cfg, c := scaleCluster(t)
	clientset, err := kubernetes.NewForConfig(cfg)
	must(t, err)
	n, err := strconv.Atoi(envOr("BENCH_SCALE_TAKEOVER", "1000"))
	must(t, err)
	operators := scaleOperators(ctx, t, cfg, c)
	runs := make([]takeoverRun, 0, 2*len(operators))
	for _, op := range operators {
		one := runTakeover(ctx, t, c, clientset, op, n, 1)
		two := runTakeover(ctx, t, c, clientset, op, n, 2)
		extra := map[string]float64{}
		for resource, gone := range two.gone {
			if d := gone - one.gone[resource]; d > 0 {
				extra[resource] = d
			}
		}
		fmt.Printf("takeover %s, %d objects: one replica settled in %s; two: the other led %s after the kill (%.2f of %s), every object settled %s after it; created %v, gone again %v (one replica: %v, %v); 409 answers %v (one replica: %v)\n",
			op, n, one.toSettled.Round(time.Second), two.takeover.Round(100*time.Millisecond), two.takeover.Seconds()/takeoverTarget.Seconds(),
			takeoverTarget, two.afterKill.Round(time.Second), two.creations, two.gone, one.creations, one.gone, two.conflicts, one.conflicts)
		if len(extra) > 0 {
			t.Errorf("%s: two replicas with a takeover created and removed again %v more objects than one replica did", op, extra)
		}
		runs = append(runs, one, two)
	}
	printTakeoverTable(runs)
}

// runTakeover runs op's manager with replicas replicas on n copies of its sample; with two,
// it kills the leader once half of them settled.
func runTakeover(ctx context.Context, t *testing.T, c client.Client, clientset *kubernetes.Clientset, op string, n, replicas int) takeoverRun {
	run := takeoverRun{operator: op, objects: n, replicas: replicas}
	// The lease has a namespace of its own, deleted after the managers stop (cleanups run last
	// first): deleted with the copies' namespaces, it took the leader's lease away before an
	// operator's finalizers were done (minimart's 1000 Helm uninstalls), and the copies'
	// namespaces stayed Terminating with no manager left to remove them.
	leaseNS := scaleNamespace(ctx, t, c, op)
	t.Cleanup(func() { deleteNamespaces(t, c, time.Minute, leaseNS) })
	namespaces := scaleNamespaces(ctx, t, c, op, n)
	managers := make(map[string]*takeoverManager, replicas)
	for _, address := range takeoverMetrics[:replicas] {
		managers[address] = &takeoverManager{address: address, cmd: startBenchManagerAt(t, op, address,
			"--leader-elect", "--leader-election-namespace="+leaseNS)}
	}
	leader := waitLeader(t, managers, "")
	sample := scaleSample(t, op)
	before := apiserverCounts(ctx, t, clientset)
	start := time.Now()
	createCopies(ctx, t, c, sample, namespaces, n)
	killed := time.Time{}
	for ; time.Since(start) < scaleSettleLimit; time.Sleep(200 * time.Millisecond) {
		settled, ready := settledCopies(ctx, t, c, sample)
		// The leader is killed at the first look that finds half settled, or all (a fast
		// operator settles a thousand objects within one look).
		if replicas == 2 && killed.IsZero() && settled >= n/2 {
			must(t, leader.cmd.Process.Signal(syscall.SIGKILL))
			_ = leader.cmd.Wait()
			killed = time.Now()
			delete(managers, leader.address)
			leader = waitLeader(t, managers, leader.address)
			run.takeover = time.Since(killed)
			continue
		}
		if settled == n && (ready == n || !scaleReadyOnKwok[op]) {
			break
		}
	}
	run.toSettled = time.Since(start)
	if !killed.IsZero() {
		run.afterKill = time.Since(killed)
	}
	run.creations, run.conflicts = apiserverCounts(ctx, t, clientset).creationsSince(before, sample)
	run.gone = goneSince(ctx, t, c, run.creations, namespaces, sample.GetKind())
	deleteNamespaces(t, c, scaleSettleLimit, namespaces...)
	for _, m := range managers {
		stopBenchManager(m.cmd)
	}
	return run
}

// takeoverManager is one replica: its metrics address and process.
type takeoverManager struct {
	address string
	cmd     *exec.Cmd
}

// waitLeader waits until one of managers but the one at previous leads, and returns it.
func waitLeader(t *testing.T, managers map[string]*takeoverManager, previous string) *takeoverManager {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for address, m := range managers {
			if address != previous && leads(address) {
				return m
			}
		}
	}
	t.Fatalf("no manager led within 2 minutes")
	return nil
}

// leads says whether the manager at address holds its lease (leader_election_master_status).
func leads(address string) bool {
	resp, err := http.Get("http://" + address + "/metrics")
	if err != nil {
		return false
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "leader_election_master_status{") && strings.HasSuffix(line, " 1") {
			return true
		}
	}
	return false
}

// apiserverTotals are the API server's apiserver_request_total series: labels to value.
type apiserverTotals map[string]float64

// apiserverCounts reads the API server's request counters.
func apiserverCounts(ctx context.Context, t *testing.T, clientset *kubernetes.Clientset) apiserverTotals {
	data, err := clientset.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	must(t, err)
	totals := apiserverTotals{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "apiserver_request_total{"); ok {
			labels, value, _ := strings.Cut(rest, "} ")
			v, err := strconv.ParseFloat(value, 64)
			must(t, err)
			totals[labels] = v
		}
	}
	must(t, sc.Err())
	return totals
}

// creationsSince counts, since before, the objects created (POST answered 201) by
// group/version/resource, leaving out the benchmark's own (sample's kind, namespaces) and what
// every client makes (Events, Leases, reviews), and the 409 answers to any write, by verb and
// resource.
func (a apiserverTotals) creationsSince(before apiserverTotals, sample interface{ GetKind() string }) (creations, conflicts map[string]float64) {
	own := strings.ToLower(sample.GetKind()) + "s"
	skip := []string{own, "namespaces", "events", "leases", "tokenreviews", "subjectaccessreviews", "selfsubjectreviews",
		"selfsubjectaccessreviews", "selfsubjectrulesreviews"}
	creations, conflicts = map[string]float64{}, map[string]float64{}
	for labels, v := range a {
		d := v - before[labels]
		if d <= 0 {
			continue
		}
		l := metricLabels(labels)
		switch {
		case l["code"] == "409" && l["resource"] != "namespaces":
			conflicts[strings.TrimSuffix(l["verb"]+" "+l["resource"]+"/"+l["subresource"], "/")] += d
		case l["verb"] == "POST" && l["code"] == "201" && l["subresource"] == "" && !slices.Contains(skip, l["resource"]):
			creations[l["group"]+"/"+l["version"]+"/"+l["resource"]] += d
		}
	}
	return creations, conflicts
}

// goneSince counts, for each namespaced resource of created that the operator makes, the
// objects created that no longer exist in namespaces: made and removed again (a replica's
// duplicate a leader deleted, or churn by design). The operator makes a resource when every
// object of it there is controlled by an object of ownerKind or installed by Helm; the others
// (a StatefulSet's pods, a Service's endpoints) go on being made by kube-controller-manager
// while they are counted, and the API server counts creations cluster-wide, so cluster-scoped
// resources (volumes) are left out too.
func goneSince(ctx context.Context, t *testing.T, c client.Client, created map[string]float64, namespaces []string, ownerKind string) map[string]float64 {
	gone := map[string]float64{}
	for key, n := range created {
		parts := strings.SplitN(key, "/", 3)
		gvr := schema.GroupVersionResource{Group: parts[0], Version: parts[1], Resource: parts[2]}
		gvk, err := c.RESTMapper().KindFor(gvr)
		must(t, err)
		namespaced, err := c.IsObjectNamespaced(&unstructured.Unstructured{Object: map[string]any{"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind}})
		must(t, err)
		if !namespaced {
			continue
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		must(t, c.List(ctx, list))
		existing, theOperators := 0, true
		for _, item := range list.Items {
			if slices.Contains(namespaces, item.GetNamespace()) {
				existing++
				owner := metav1.GetControllerOf(&item)
				theOperators = theOperators && (owner != nil && owner.Kind == ownerKind || item.GetLabels()["app.kubernetes.io/managed-by"] == "Helm")
			}
		}
		if theOperators {
			gone[key] = n - float64(existing)
		}
	}
	return gone
}

func metricLabels(labels string) map[string]string {
	out := map[string]string{}
	for _, pair := range strings.Split(labels, ",") {
		if k, v, ok := strings.Cut(pair, "="); ok {
			out[k] = strings.Trim(v, `"`)
		}
	}
	return out
}

func printTakeoverTable(runs []takeoverRun) {
	fmt.Printf("\n| operator | objects | replicas | create → settled | leader killed → other leads | leader killed → settled | created (gone again) | 409 answers |\n")
	fmt.Printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range runs {
		takeover, after := "", ""
		if r.replicas == 2 {
			takeover, after = r.takeover.Round(100*time.Millisecond).String(), r.afterKill.Round(time.Second).String()
		}
		var created []string
		for _, resource := range slices.Sorted(maps.Keys(r.creations)) {
			if gone, ok := r.gone[resource]; ok {
				created = append(created, fmt.Sprintf("%s %g (%g)", resource[strings.LastIndex(resource, "/")+1:], r.creations[resource], gone))
			}
		}
		var conflicts []string
		for _, write := range slices.Sorted(maps.Keys(r.conflicts)) {
			conflicts = append(conflicts, fmt.Sprintf("%s %g", write, r.conflicts[write]))
		}
		fmt.Printf("| %s | %d | %d | %s | %s | %s | %s | %s |\n", r.operator, r.objects, r.replicas, r.toSettled.Round(time.Second),
			takeover, after, strings.Join(created, ", "), strings.Join(conflicts, ", "))
	}
}
