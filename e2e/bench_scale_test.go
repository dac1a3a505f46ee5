//go:build bench

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/quintet-operators/quintet/e2e/clusterconfig"
)

// The scale benchmark's shape: copies of each operator's main sample, ten per namespace
// (scaleNamespaces), created at once; then a steady-state window in which the manager must not
// write.
const (
	scalePerNamespace = 10
	scaleSettleLimit  = 15 * time.Minute
	scaleLabel        = "bench.quintet.dev/scale"
	scaleQuiet        = 30 * time.Second
	// scaleQuietLimit: kre-runtime's 1000 Runtimes ask kube-controller-manager for 4000
	// StatefulSet pods, each ordinal made once the one before is Ready; the last Runtimes
	// became Ready 13 minutes after they were created (every write on the way a real change).
	scaleQuietLimit = 20 * time.Minute
	// scaleProfiles is where the manager serves Go's profiles: TestBenchScale reads its heap after
	// the steady window; the broken-tenth runs serve them for a profiler to read while they run.
	scaleProfiles = "127.0.0.1:18090"
)

// scaleReadyOnKwok are the operators whose objects can be Ready on kwok nodes (their pods are
// objects only, Running and Ready as kwok says): the benchmark waits for Ready there. The
// others need what kwok cannot run (etcd members that answer, KMM, MongoDB), so it waits until
// every object's status says why it waits.
var scaleReadyOnKwok = map[string]bool{"gordon": true, "minimart": true}

// scaleRun is what one manager did with n objects.
type scaleRun struct {
	operator            string
	objects, settled    int           // settled: status observed at the object's generation, with a Ready condition (Ready=True where kwok allows)
	ready               int           // of those, Ready=True
	toSettled           time.Duration // creating the objects until every one settled
	during, steady      requestCounts // the manager's API requests until settled, and in the steady window
	steadyWindow        time.Duration
	steadyWrites        steadyWrites // what the API server shows of the steady window's writes
	idleRSS             int64        // before the objects
	peakRSS, settledRSS int64
	settledAnon         int64         // of the settled RSS, the manager's own (anonymous) memory: the rest is the binary's pages
	liveHeap            float64       // the Go heap live at the last collection, at the end of the steady window
	heapTop             string        // what holds that heap: the top of its profile
	cpu                 time.Duration // the manager's CPU time until settled
	quietAfter          time.Duration // after settling, until the manager wrote nothing for scaleQuiet
	maxDepth            float64       // the deepest any of its work queues got
	longestProcessing   float64       // the longest any worker held one item, in seconds
}

// TestBenchScale runs each operator's manager (BENCH_SCALE_OPERATORS, comma-separated; all
// five by default) as a local process against the local cluster, with BENCH_SCALE_SIZES
// (100,300,1000) copies of its main kind's sample created at once, ten per namespace, each size
// on a fresh manager. It measures the time until every object's status is observed at its
// generation with a Ready condition (Ready itself may wait for what kwok nodes cannot run, and
// the table says how many are), the manager's API requests by verb until then and in
// BENCH_SCALE_STEADY (2m) of steady state after (where it must write nothing), its peak and
// settled RSS and CPU time, and its work queues' deepest point and longest-held item.
func TestBenchScale(t *testing.T) {
	ctx := context.Background()
	cfg, c := scaleCluster(t)
	sizes := benchList(t, "BENCH_SCALE_SIZES", "100,300,1000")
	steady, err := time.ParseDuration(envOr("BENCH_SCALE_STEADY", "2m"))
	must(t, err)

	operators := scaleOperators(ctx, t, cfg, c)
	runs := make([]scaleRun, 0, len(sizes)*len(operators))
	for _, op := range operators {
		for _, size := range sizes {
			n, err := strconv.Atoi(size)
			must(t, err)
			run := runScale(ctx, t, c, op, n, steady)
			runs = append(runs, run)
		}
	}
	printScaleTable(runs)
	figures := make([]string, 0, len(runs))
	for _, r := range runs {
		figures = append(figures, fmt.Sprintf("%s, %d\t%.1f\t%.1f\t%.1f\t%.1f\t%d", r.operator, r.objects, r.toSettled.Seconds(),
			float64(r.settledRSS)/(1<<20), float64(r.peakRSS)/(1<<20), r.cpu.Seconds(), r.steady.writes()))
	}
	writeBenchFigures(t, "operator, objects\tcreate to settled (s)\tRSS settled (MiB)\tpeak RSS (MiB)\tCPU until settled (s)\tsteady-state writes (writes)", figures...)
	for _, r := range runs {
		if w := r.steady.writes(); w != 0 {
			t.Errorf("%s with %d objects: %d writes in %s of steady state, want 0", r.operator, r.objects, w, r.steadyWindow)
		}
	}
}

// scaleCluster is the local cluster's config and a client for it, which may create a
// thousand objects at once (not at client-go's default 5 per second); any other cluster fails
// the benchmark.
func scaleCluster(t *testing.T) (*rest.Config, client.Client) {
	cfg, err := clusterconfig.Config()
	must(t, err)
	requireLocalCluster(t, cfg)
	cfg.QPS, cfg.Burst = 500, 1000
	c, err := client.New(cfg, client.Options{})
	must(t, err)
	return cfg, c
}

// scaleOperators are the operators BENCH_SCALE_OPERATORS names (all five by default), their
// CRDs installed, and KMM's Module kind served for ptemplate-device until the test ends.
func scaleOperators(ctx context.Context, t *testing.T, cfg *rest.Config, c client.Client) []string {
	operators := benchList(t, "BENCH_SCALE_OPERATORS", "etcd-cluster,gordon,kre-runtime,minimart,ptemplate-device")
	for _, op := range operators {
		if _, ok := metricsBenchSamples[op]; !ok {
			t.Fatalf("BENCH_SCALE_OPERATORS: no operator %q", op)
		}
		_, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{
			Paths: []string{filepath.Join("..", "operators", op, "config", "crd", "bases")}, ErrorIfPathMissing: true,
		})
		must(t, err)
		if op == "ptemplate-device" { // without KMM's Module kind, a Ptemplate makes nothing
			serveKMMModules(ctx, t, cfg, c)
		}
	}
	return operators
}

// runScale runs a fresh manager of op with n copies of its sample, then deletes them (the
// manager still running, for any finalizer) and stops it.
func runScale(ctx context.Context, t *testing.T, c client.Client, op string, n int, steady time.Duration) scaleRun {
	manager := startBenchManager(t, op, "--pprof-bind-address="+scaleProfiles)
	run := scaleRun{operator: op, objects: n, steadyWindow: steady}
	namespaces := scaleNamespaces(ctx, t, c, op, n)
	sample := scaleSample(t, op)
	watch := watchManager()
	run.idleRSS = procMemory(t, manager.Process.Pid, "VmRSS:")
	before, cpuBefore := scrapeRequests(t, benchMetrics), cpuTime(t, manager)
	start := time.Now()
	createCopies(ctx, t, c, sample, namespaces, n)
	for ; time.Since(start) < scaleSettleLimit; time.Sleep(time.Second) {
		run.settled, run.ready = settledCopies(ctx, t, c, sample)
		if run.settled == n && (run.ready == n || !scaleReadyOnKwok[op]) {
			break
		}
	}
	run.toSettled = time.Since(start)
	run.during, run.cpu = scrapeRequests(t, benchMetrics).sub(before), cpuTime(t, manager)-cpuBefore
	run.settledRSS = procMemory(t, manager.Process.Pid, "VmRSS:")
	run.settledAnon = procMemory(t, manager.Process.Pid, "RssAnon:")
	if run.settled < n || (scaleReadyOnKwok[op] && run.ready < n) {
		t.Logf("%s: %d of %d objects settled, %d Ready, after %s", op, run.settled, n, run.ready, scaleSettleLimit)
	}
	run.quietAfter = waitQuiet(t)
	steadyBefore, copiesBefore, steadyStart := scrapeRequests(t, benchMetrics), snapshotCopies(ctx, t, c, sample), time.Now()
	time.Sleep(steady)
	run.steady = scrapeRequests(t, benchMetrics).sub(steadyBefore)
	run.steadyWrites = steadyWritesSince(ctx, t, c, sample, copiesBefore, steadyStart)
	run.liveHeap = metricSample("go_gc_heap_live_bytes")
	run.heapTop = heapTop(t)
	run.maxDepth, run.longestProcessing = watch.stop()
	run.peakRSS = peakRSS(t, manager)
	printScaleRun(run) // before the clean-up, which may fail
	deleteNamespaces(t, c, scaleSettleLimit, namespaces...)
	stopBenchManager(manager)
	return run
}

// waitQuiet waits until the manager writes nothing for scaleQuiet (what settled objects still
// do on their way, such as starting members behind their start gates as kube-controller-manager
// makes the pods and kwok runs them, is not steady state), scaleQuietLimit at most, and returns
// how long that took.
func waitQuiet(t *testing.T) time.Duration {
	start := time.Now()
	for time.Since(start) < scaleQuietLimit {
		before := scrapeRequests(t, benchMetrics)
		time.Sleep(scaleQuiet)
		if scrapeRequests(t, benchMetrics).sub(before).writes() == 0 {
			break
		}
	}
	return time.Since(start)
}

// requireLocalCluster refuses a cluster whose API server is not on this machine's loopback:
// the benchmark creates and deletes a thousand objects and a hundred namespaces.
func requireLocalCluster(t *testing.T, cfg *rest.Config) {
	u, err := url.Parse(cfg.Host)
	must(t, err)
	if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		t.Fatalf("the scale benchmark runs only against the local cluster (an API server on loopback), not %s", cfg.Host)
	}
}

func envOr(name, value string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return value
}

// benchList is the comma-separated list in the environment variable name, or def.
func benchList(t *testing.T, name, def string) []string {
	var out []string
	for _, v := range strings.Split(envOr(name, def), ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s is empty", name)
	}
	return out
}

// scaleNamespaces makes the namespaces for n copies of op's sample, deleted when the test
// ends: one per ten copies, but one per copy for kre-runtime, as KRE runs one Runtime in a
// namespace (its servers have fixed names there: a second Runtime in it waits, Degraded).
func scaleNamespaces(ctx context.Context, t *testing.T, c client.Client, op string, n int) []string {
	per := scalePerNamespace
	if op == "kre-runtime" {
		per = 1
	}
	namespaces := make([]string, 0, (n+per-1)/per)
	for range cap(namespaces) {
		namespaces = append(namespaces, scaleNamespace(ctx, t, c, op))
	}
	t.Cleanup(func() { deleteNamespaces(t, c, scaleSettleLimit, namespaces...) })
	return namespaces
}

// scaleNamespace makes a namespace of the benchmark, labelled for its clean-up.
func scaleNamespace(ctx context.Context, t *testing.T, c client.Client, op string) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-scale-" + op + "-", Labels: map[string]string{scaleLabel: op}}}
	must(t, c.Create(ctx, ns))
	return ns.Name
}

// scaleSample is the operator's sample of its main kind, labelled as the benchmark's.
func scaleSample(t *testing.T, op string) *unstructured.Unstructured {
	sample := benchSample(t, op)
	labels := sample.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[scaleLabel] = op
	sample.SetLabels(labels)
	return sample
}

// createCopies creates n copies of sample, spread evenly over namespaces, from eight clients
// at once, as a tenant's pipeline applying them would.
func createCopies(ctx context.Context, t *testing.T, c client.Client, sample *unstructured.Unstructured, namespaces []string, n int) {
	createCopiesOf(ctx, t, c, namespaces, n, func(int) *unstructured.Unstructured { return sample })
}

// copyName is the name of copy i of sample.
func copyName(sample *unstructured.Unstructured, i int) string {
	return fmt.Sprintf("%s-%04d", sample.GetName(), i)
}

// createCopiesOf is createCopies with copy i made from sampleOf(i), named after it.
func createCopiesOf(ctx context.Context, t *testing.T, c client.Client, namespaces []string, n int, sampleOf func(i int) *unstructured.Unstructured) {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				u := sampleOf(i).DeepCopy()
				u.SetNamespace(copyNamespace(namespaces, n, i))
				u.SetName(copyName(u, i))
				if err := c.Create(ctx, u); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// copyNamespace is the namespace of copy i of n spread evenly over namespaces.
func copyNamespace(namespaces []string, n, i int) string {
	return namespaces[i*len(namespaces)/n]
}

// listCopies lists the copies of sample: the objects of its kind with its scaleLabel.
func listCopies(ctx context.Context, t *testing.T, c client.Client, sample *unstructured.Unstructured) []unstructured.Unstructured {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(sample.GetAPIVersion())
	list.SetKind(sample.GetKind() + "List")
	must(t, c.List(ctx, list, client.MatchingLabels{scaleLabel: sample.GetLabels()[scaleLabel]}))
	return list.Items
}

// settledCopies counts the copies whose status is observed at their generation with a Ready
// condition, and those Ready.
func settledCopies(ctx context.Context, t *testing.T, c client.Client, sample *unstructured.Unstructured) (settled, ready int) {
	for _, u := range listCopies(ctx, t, c, sample) {
		observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		if status, _ := conditionOf(u, "Ready"); observed == u.GetGeneration() && status != "" {
			settled++
			if status == "True" {
				ready++
			}
		}
	}
	return settled, ready
}

// managerWatch samples a manager's work queues every two seconds until stopped.
type managerWatch struct {
	done              chan struct{}
	wg                sync.WaitGroup
	maxDepth, longest float64
}

func watchManager() *managerWatch {
	w := &managerWatch{done: make(chan struct{})}
	w.wg.Go(func() {
		for {
			depth, longest, _ := queueSample()
			w.maxDepth, w.longest = max(w.maxDepth, depth), max(w.longest, longest)
			select {
			case <-w.done:
				return
			case <-time.After(2 * time.Second):
			}
		}
	})
	return w
}

// stop ends the sampling and returns the deepest total queue depth and the longest time a
// worker held one item.
func (w *managerWatch) stop() (float64, float64) {
	close(w.done)
	w.wg.Wait()
	return w.maxDepth, w.longest
}

// queueSample reads the manager's controller-runtime metrics: the sum of its work queues'
// depths, and the longest any worker has been processing its item; 0 and 0 when the scrape
// fails, which it returns.
func queueSample() (depth, longest float64, err error) {
	err = forEachSample(func(name string, v float64) {
		switch name {
		case "workqueue_depth":
			depth += v
		case "workqueue_longest_running_processor_seconds":
			longest = max(longest, v)
		}
	})
	return depth, longest, err
}

// metricSample is the value of the manager's metric name, summed over its series (0 without
// one, or when the scrape fails).
func metricSample(name string) (value float64) {
	_ = forEachSample(func(n string, v float64) {
		if n == name {
			value += v
		}
	})
	return value
}

// forEachSample scrapes the manager's metrics and calls fn with each sample's metric name
// and value; nothing when the scrape fails, which it returns.
func forEachSample(fn func(name string, value float64)) error {
	body, err := scrapeOnce()
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		series, value, ok := strings.Cut(line, " ")
		if labelled := strings.Index(line, "} "); labelled >= 0 {
			series, value, ok = line[:labelled+1], line[labelled+2:], true
		}
		v, err := strconv.ParseFloat(value, 64)
		if !ok || err != nil {
			continue
		}
		name, _, _ := strings.Cut(series, "{")
		fn(name, v)
	}
	return sc.Err()
}

// heapTop is the top of the manager's heap profile by the memory in use: which functions
// allocated what it holds.
func heapTop(t *testing.T) string {
	resp, err := http.Get("http://" + scaleProfiles + "/debug/pprof/heap?gc=1")
	must(t, err)
	defer func() { _ = resp.Body.Close() }()
	profile := filepath.Join(t.TempDir(), "heap.pprof")
	body, err := io.ReadAll(resp.Body)
	must(t, err)
	must(t, os.WriteFile(profile, body, 0o600))
	out, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=15", "-sample_index=inuse_space", profile).CombinedOutput()
	must(t, err)
	return string(out)
}

func printScaleRun(r scaleRun) {
	fmt.Printf("%s, %d objects: %d settled (%d Ready) in %s; requests until then %s; quiet %s later; steady %s: %s; CPU %s; RSS idle %.1f MiB, peak %.1f MiB, settled %.1f MiB (anonymous %.1f MiB); live heap after the steady window %.1f MiB; queue depth max %.0f, longest item %.1f s\nwritten in the steady window: %s\n%s\n",
		r.operator, r.objects, r.settled, r.ready, r.toSettled.Round(100*time.Millisecond), r.during, r.quietAfter.Round(time.Second), r.steadyWindow, r.steady,
		r.cpu.Round(100*time.Millisecond), float64(r.idleRSS)/(1<<20), float64(r.peakRSS)/(1<<20), float64(r.settledRSS)/(1<<20), float64(r.settledAnon)/(1<<20), r.liveHeap/(1<<20), r.maxDepth, r.longestProcessing, r.steadyWrites, r.heapTop)
}

// printScaleTable prints a row per run, and the growth of each manager's settled RSS per 100
// objects between its smallest and largest runs.
func printScaleTable(runs []scaleRun) {
	fmt.Printf("\n== bench-scale: copies of each operator's sample, %d per namespace (kre-runtime: 1), created at once; manager as a local process, 4 workers per controller\n", scalePerNamespace)
	fmt.Printf("%-17s %7s %8s %6s %10s %9s %9s %9s %9s %9s %8s %7s %7s %22s\n", "operator", "objects", "settled", "Ready", "to settled", "RSS idle", "RSS peak", "RSS then",
		"anon then", "live heap", "CPU", "depth", "held", "steady-state requests")
	for _, r := range runs {
		fmt.Printf("%-17s %7d %8d %6d %10s %8.1fM %8.1fM %8.1fM %8.1fM %8.1fM %8s %7.0f %6.1fs %22s\n", r.operator, r.objects, r.settled, r.ready,
			r.toSettled.Round(100*time.Millisecond), float64(r.idleRSS)/(1<<20), float64(r.peakRSS)/(1<<20), float64(r.settledRSS)/(1<<20),
			float64(r.settledAnon)/(1<<20), r.liveHeap/(1<<20), r.cpu.Round(100*time.Millisecond), r.maxDepth, r.longestProcessing, r.steady)
	}
	for i, r := range runs {
		if i+1 < len(runs) && runs[i+1].operator == r.operator {
			continue
		}
		first := i
		for first > 0 && runs[first-1].operator == r.operator {
			first--
		}
		if f := runs[first]; f.objects != r.objects {
			perHundred := float64(r.settledRSS-f.settledRSS) / (1 << 20) / float64(r.objects-f.objects) * 100
			fmt.Printf("%s: settled RSS grows %.2f MiB per 100 objects (%d to %d); at %d objects %.1f MiB, peak %.1f MiB (target: under 64)\n",
				r.operator, perHundred, f.objects, r.objects, r.objects, float64(r.settledRSS)/(1<<20), float64(r.peakRSS)/(1<<20))
		}
	}
}
