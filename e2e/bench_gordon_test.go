//go:build bench

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/quintet-operators/quintet/e2e/clusterconfig"
)

// The benchmark's shape: the 100 owners × 10 replicas, 10% of pods deleted.
const (
	benchOwners     = 100
	benchReplicas   = 10
	benchDeleteFrac = 10
	benchMetrics    = "127.0.0.1:18080"
	benchTimeout    = 5 * time.Minute
)

// TestBenchGordon runs 100 Gordons × 10 replicas, and the same pods under 100 ReplicaSets
// managed by kube-controller-manager (the anchor), on the local cluster, and prints both
// times, their ratio, the operator's API requests and its peak memory.
func TestBenchGordon(t *testing.T) {
	ctx := context.Background()
	cfg, err := clusterconfig.Config()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join("..", "operators", "gordon", "config", "crd", "bases")}, ErrorIfPathMissing: true,
	}); err != nil {
		t.Fatal(err)
	}
	manager := startBenchManager(t, "gordon")

	opNS := benchNamespace(t, c, "bench-gordon")
	requestsBefore := scrapeRequests(t, benchMetrics)
	opUp := timeUntilRunning(t, c, opNS, func() { createGordons(t, c, opNS) })
	opReplace := timeUntilRunning(t, c, opNS, func() { deleteEveryNth(t, c, opNS, benchDeleteFrac) })
	requestsAfter := scrapeRequests(t, benchMetrics)

	// Steady state: every Gordon reports all its pods Ready; then nothing changes for 10 s
	// and the operator must not write.
	statusCaughtUp := waitGordonsReady(t, c, opNS)
	time.Sleep(5 * time.Second)
	steadyBefore := scrapeRequests(t, benchMetrics)
	time.Sleep(10 * time.Second)
	steadyAfter := scrapeRequests(t, benchMetrics)
	peakMemory := peakRSS(t, manager)
	deleteNamespaces(t, c, benchTimeout, opNS) // frees the nodes' pod slots for the next run
	stopBenchManager(manager)

	// Like for like: gordon with kube-controller-manager's client limits and ReplicaSet workers.
	limited := startBenchManager(t, "gordon", rsClientLimits...)
	limNS := benchNamespace(t, c, "bench-gordon-limited")
	limUp := timeUntilRunning(t, c, limNS, func() { createGordons(t, c, limNS) })
	limReplace := timeUntilRunning(t, c, limNS, func() { deleteEveryNth(t, c, limNS, benchDeleteFrac) })
	deleteNamespaces(t, c, benchTimeout, limNS)
	stopBenchManager(limited)

	rsNS := benchNamespace(t, c, "bench-replicaset")
	rsUp := timeUntilRunning(t, c, rsNS, func() {
		for i := range benchOwners {
			must(t, c.Create(ctx, benchReplicaSet(rsNS, fmt.Sprintf("rs%03d", i))))
		}
	})
	rsReplace := timeUntilRunning(t, c, rsNS, func() { deleteEveryNth(t, c, rsNS, benchDeleteFrac) })
	deleteNamespaces(t, c, benchTimeout, rsNS)

	total := benchOwners * benchReplicas
	fmt.Printf("\n== bench-gordon: %d owners x %d replicas = %d pods on kwok nodes\n", benchOwners, benchReplicas, total)
	fmt.Printf("%-34s %-40s %12s %12s %8s\n", "", "gordon run", "gordon", "replicaset", "ratio")
	for _, row := range []struct {
		name, run          string
		gordon, replicaset time.Duration
	}{
		{"create to all Running", "no client limit, 4 workers", opUp, rsUp},
		{"create to all Running", "QPS 50, burst 100, 5 workers (fair)", limUp, rsUp},
		{fmt.Sprintf("replace %d deleted pods", total/benchDeleteFrac), "no client limit, 4 workers", opReplace, rsReplace},
		{fmt.Sprintf("replace %d deleted pods", total/benchDeleteFrac), "QPS 50, burst 100, 5 workers (fair)", limReplace, rsReplace},
	} {
		fmt.Printf("%-34s %-40s %12s %12s %8.2f\n", row.name, row.run, row.gordon.Round(time.Millisecond),
			row.replicaset.Round(time.Millisecond), row.gordon.Seconds()/row.replicaset.Seconds())
	}
	fmt.Printf("every Gordon's status Ready after the replacement: %s later\n", statusCaughtUp.Round(time.Millisecond))
	fmt.Printf("operator API requests (create + replace): %s\n", requestsAfter.sub(requestsBefore))
	fmt.Printf("operator API requests in 10 s of steady state: %s (writes: %d)\n",
		steadyAfter.sub(steadyBefore), steadyAfter.sub(steadyBefore).writes())
	fmt.Printf("operator peak memory (VmHWM): %.1f MiB\n", float64(peakMemory)/(1<<20))
	fmt.Println("client limits: kube-controller-manager QPS 50, burst 100, 5 ReplicaSet workers (its defaults, which the local cluster keeps); " +
		"the fair rows run gordon with the same (--kube-api-qps=50 --kube-api-burst=100 --max-concurrent-reconciles=5); " +
		"the others with none (API Priority and Fairness) and 4 workers. Requests and memory are of the first run.")

	writeBenchFigures(t, fmt.Sprintf("run\tcreate to %d pods Running (s)\treplace %d deleted pods (s)", total, total/benchDeleteFrac),
		fmt.Sprintf("gordon, no client limit\t%.2f\t%.2f", opUp.Seconds(), opReplace.Seconds()),
		fmt.Sprintf("gordon, QPS 50, 5 workers\t%.2f\t%.2f", limUp.Seconds(), limReplace.Seconds()),
		fmt.Sprintf("ReplicaSet controller\t%.2f\t%.2f", rsUp.Seconds(), rsReplace.Seconds()))

	if w := steadyAfter.sub(steadyBefore).writes(); w != 0 {
		t.Errorf("the operator made %d writes in steady state, want 0", w)
	}
}

// createGordons creates the benchmark's Gordons in namespace.
func createGordons(t *testing.T, c client.Client, namespace string) {
	for i := range benchOwners {
		g := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "operator.prgcont.cz/v1", "kind": "Gordon",
			"metadata": map[string]any{"name": fmt.Sprintf("g%03d", i), "namespace": namespace},
			"spec":     map[string]any{"gordon": map[string]any{"replicas": int64(benchReplicas)}},
		}}
		must(t, c.Create(context.Background(), g))
	}
}

// rsClientLimits are kube-controller-manager's client limits and ReplicaSet workers on the
// local cluster, for the like-for-like run.
var rsClientLimits = []string{"--kube-api-qps=50", "--kube-api-burst=100", "--max-concurrent-reconciles=5"}

func stopBenchManager(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
}

// inBenchSandbox runs cmd in a mount namespace of its own whose /etc/resolv.conf names a
// resolver on loopback: the local cluster's DNS when its real node runs one, else 127.0.0.1,
// where nothing answers, so a lookup fails at once. A manager outside the cluster looks up
// the names of what it manages (an etcd member's <pod>.<cluster>.<namespace>.svc), and the
// host's resolver is off this machine: no benchmark sends traffic there. When memoryGroup (a
// cgroup v1 memory group's directory) is not empty, cmd runs in that group, which the mount
// namespace shows at /sys/fs/cgroup/memory as a container sees its own: the manager reads its
// limit there. The process keeps cmd's pid (neither unshare nor the shell forks), for /proc.
func inBenchSandbox(t *testing.T, cmd *exec.Cmd, memoryGroup string) *exec.Cmd {
	resolvConf := filepath.Join(os.Getenv("E2E_LOCAL_DIR"), "node", "host-resolv.conf")
	if _, err := os.Stat(resolvConf); os.Getenv("E2E_LOCAL_DIR") == "" || err != nil {
		resolvConf = filepath.Join(t.TempDir(), "resolv.conf")
		must(t, os.WriteFile(resolvConf, []byte("nameserver 127.0.0.1\n"), 0o600))
	}
	if os.Geteuid() != 0 {
		t.Fatal("the benchmarks run their managers with a resolver on loopback, in a mount namespace: run them as root")
	}
	script, args := `mount --bind "$0" /etc/resolv.conf && exec "$@"`, []string{resolvConf}
	if memoryGroup != "" {
		script = `echo $$ > "$1/cgroup.procs" && mount --bind "$1" /sys/fs/cgroup/memory && shift && ` + script
		args = append(args, memoryGroup)
	}
	args = append(append(args, cmd.Path), cmd.Args[1:]...)
	wrapped := exec.Command("/usr/bin/unshare", append([]string{"--mount", "--propagation", "private", "--", "/bin/sh", "-c", script}, args...)...)
	wrapped.Env, wrapped.Dir = cmd.Env, cmd.Dir
	return wrapped
}

// startBenchManager builds and runs operator's manager with plain-HTTP metrics on loopback.
func startBenchManager(t *testing.T, operator string, args ...string) *exec.Cmd {
	return startBenchManagerAt(t, operator, benchMetrics, args...)
}

// startBenchManagerAt is startBenchManager with the metrics at address.
func startBenchManagerAt(t *testing.T, operator, address string, args ...string) *exec.Cmd {
	return runBenchManager(t, buildBenchManager(t, operator), address, "", args...)
}

// buildBenchManager builds operator's manager and returns the binary's path.
func buildBenchManager(t *testing.T, operator string) string {
	bin := filepath.Join(t.TempDir(), operator+"-manager")
	build := exec.Command("go", "build", "-o", bin, "./cmd")
	build.Dir = filepath.Join("..", "operators", operator)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the manager: %v\n%s", err, out)
	}
	return bin
}

// runBenchManager runs the manager binary bin with plain-HTTP metrics at address, in the
// memory group memoryGroup unless it is empty (inBenchSandbox).
func runBenchManager(t *testing.T, bin, address, memoryGroup string, args ...string) *exec.Cmd {
	logPath := filepath.Join(t.TempDir(), "manager.log")
	logf, err := os.Create(logPath)
	must(t, err)
	cmd := inBenchSandbox(t, exec.Command(bin, append([]string{"--metrics-bind-address=" + address, "--metrics-secure=false",
		"--health-probe-bind-address=0", "--leader-elect=false"}, args...)...), memoryGroup)
	cmd.Stdout, cmd.Stderr = benchLog{logf}, benchLog{logf}
	must(t, cmd.Start())
	t.Cleanup(func() { stopBenchManager(cmd) })
	if !servesMetrics(address) {
		log, _ := os.ReadFile(logPath)
		t.Fatalf("no metrics at %s after 30 s; the manager's log:\n%s", address, log)
	}
	return cmd
}

// benchLog is a manager's log file, which the manager writes through a pipe and the test copies
// to the file: a process given the file itself would be charged, in its memory group, for
// the page cache of what it writes, and a container, whose runtime reads its output, is not.
type benchLog struct{ *os.File }

// waitForMetrics waits until a manager serves its metrics at address.
func waitForMetrics(t *testing.T, address string) {
	t.Helper()
	if !servesMetrics(address) {
		t.Fatalf("no metrics at %s", address)
	}
}

// servesMetrics waits up to 30 s until a manager serves its metrics at address.
func servesMetrics(address string) bool {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if resp, err := http.Get("http://" + address + "/metrics"); err == nil {
			_ = resp.Body.Close()
			return true
		}
	}
	return false
}

func benchNamespace(t *testing.T, c client.Client, name string) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: name + "-"}}
	must(t, c.Create(context.Background(), ns))
	return ns.Name
}

func benchReplicaSet(namespace, name string) *appsv1.ReplicaSet {
	labels := map[string]string{"bench": name}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To[int32](benchReplicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "gordon", Image: "prgcont/gordon:v1.0"}}},
			},
		},
	}
}

// timeUntilRunning runs act and measures until the namespace has exactly the benchmark's pod
// count, all Running and none terminating, with every pod created after act started Running.
func timeUntilRunning(t *testing.T, c client.Client, namespace string, act func()) time.Duration {
	ctx := context.Background()
	start := time.Now()
	act()
	want := benchOwners * benchReplicas
	running, total := 0, 0
	for time.Since(start) < benchTimeout {
		list := &corev1.PodList{}
		must(t, c.List(ctx, list, client.InNamespace(namespace)))
		running, total = 0, len(list.Items)
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		if running == want && len(list.Items) == want {
			return time.Since(start)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: %d of %d pods Running (%d pods in all) after %s", namespace, running, want, total, benchTimeout)
	return 0
}

// waitGordonsReady waits until every Gordon in the namespace is Ready with all its replicas
// Ready at its current generation, and returns how long that took.
func waitGordonsReady(t *testing.T, c client.Client, namespace string) time.Duration {
	ctx := context.Background()
	start := time.Now()
	for time.Since(start) < benchTimeout {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion("operator.prgcont.cz/v1")
		list.SetKind("GordonList")
		must(t, c.List(ctx, list, client.InNamespace(namespace)))
		ready := 0
		for _, g := range list.Items {
			observed, _, _ := unstructured.NestedInt64(g.Object, "status", "observedGeneration")
			readyReplicas, _, _ := unstructured.NestedInt64(g.Object, "status", "readyReplicas")
			if observed == g.GetGeneration() && readyReplicas == benchReplicas && conditionTrue(g, "Ready") {
				ready++
			}
		}
		if ready == benchOwners {
			return time.Since(start)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("Gordons not all Ready after %s", benchTimeout)
	return 0
}

func conditionTrue(u unstructured.Unstructured, condType string) bool {
	status, _ := conditionOf(u, condType)
	return status == "True"
}

// conditionOf is the status and reason of u's condition of type condType; empty without one.
func conditionOf(u unstructured.Unstructured, condType string) (status, reason string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == condType {
			status, _ = m["status"].(string)
			reason, _ = m["reason"].(string)
			return status, reason
		}
	}
	return "", ""
}

// namespaceDeletion is what the wait for deleted namespaces allows each at least:
// kube-controller-manager, at its default client rate, deleted kre-runtime's 1000 namespaces
// of 11 objects and 4 pods each in about 16 minutes.
const namespaceDeletion = 1500 * time.Millisecond

// deleteNamespaces deletes the namespaces and waits until they are all gone, failing after
// timeout or namespaceDeletion for each, whichever is longer.
func deleteNamespaces(t *testing.T, c client.Client, timeout time.Duration, names ...string) {
	timeout = max(timeout, time.Duration(len(names))*namespaceDeletion)
	ctx := context.Background()
	for _, ns := range names {
		must(t, client.IgnoreNotFound(c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})))
	}
	waitFor(t, timeout, fmt.Sprintf("namespaces %v are deleted", names), func() bool {
		for _, ns := range names {
			if err := c.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}); err == nil || client.IgnoreNotFound(err) != nil {
				return false // still there, or not known to be gone
			}
		}
		return true
	})
}

// deleteEveryNth deletes every nth pod of the namespace.
func deleteEveryNth(t *testing.T, c client.Client, namespace string, n int) {
	ctx := context.Background()
	list := &corev1.PodList{}
	must(t, c.List(ctx, list, client.InNamespace(namespace)))
	for i := 0; i < len(list.Items); i += n {
		must(t, client.IgnoreNotFound(c.Delete(ctx, &list.Items[i])))
	}
}

// requestCounts is rest_client_requests_total of the manager, summed by HTTP method.
type requestCounts map[string]float64

func (r requestCounts) sub(o requestCounts) requestCounts {
	d := requestCounts{}
	for k, v := range r {
		if v-o[k] != 0 {
			d[k] = v - o[k]
		}
	}
	return d
}

func (r requestCounts) total() float64 {
	total := 0.0
	for _, v := range r {
		total += v
	}
	return total
}

func (r requestCounts) writes() int {
	return int(r["POST"] + r["PUT"] + r["PATCH"] + r["DELETE"])
}

func (r requestCounts) String() string {
	var parts []string
	total := 0.0
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		if r[m] != 0 {
			parts = append(parts, fmt.Sprintf("%s %d", m, int(r[m])))
			total += r[m]
		}
	}
	if total == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%s)", int(total), strings.Join(parts, ", "))
}

func scrapeRequests(t *testing.T, address string) requestCounts {
	counts, err := requestsOf(address)
	must(t, err)
	return counts
}

// requestsOf reads the manager's API requests by verb (client-go's rest_client_requests_total)
// from its metrics at address, giving up after scrapeClient's timeout.
func requestsOf(address string) (requestCounts, error) {
	body, err := scrapeAt(scrapeClient, address)
	if err != nil {
		return nil, err
	}
	counts := requestCounts{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "rest_client_requests_total{") {
			continue
		}
		labels, value, _ := strings.Cut(strings.TrimPrefix(line, "rest_client_requests_total{"), "} ")
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, err
		}
		for _, l := range strings.Split(labels, ",") {
			if k, m, ok := strings.Cut(l, "="); ok && k == "method" {
				counts[strings.Trim(m, `"`)] += v
			}
		}
	}
	return counts, sc.Err()
}

// peakRSS reads the process's peak resident set size (VmHWM) in bytes.
func peakRSS(t *testing.T, cmd *exec.Cmd) int64 {
	return procMemory(t, cmd.Process.Pid, "VmHWM:")
}

// procMemory reads a memory field (in kB) of a process's /proc status, in bytes.
func procMemory(t *testing.T, pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	must(t, err)
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			must(t, err)
			return kb * 1024
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
