//go:build bench

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// memoryGroups is cgroup v1's memory hierarchy, where the benchmark makes a group per run: the
// local cluster's host runs cgroup v1 (its node says so too, see shared/manager's memory.go).
const memoryGroups = "/sys/fs/cgroup/memory"

// limitedPatience is how long a limited manager has to settle the copies, against the time the
// same manager took without a limit (2 minutes at least): one short of memory may spend it
// reclaiming pages rather than reconciling, and never get there.
const limitedPatience = 5

// limitedRun is one manager's run with copies of its sample in a memory group of its own,
// limited or not: what the group was charged, and whether the manager lived.
type limitedRun struct {
	operator                string
	limit                   int64 // the group's memory limit in bytes; 0: none
	objects, settled        int
	toSettled               time.Duration // creating the copies until every one settled, or until the manager died
	cpu                     time.Duration
	gcCycles                float64 // garbage collections until settled; -1: unknown
	settledRSS, settledAnon int64   // RSS and, of it, anonymous memory when every copy settled
	groupPeak               int64   // the most the group was charged: the manager's memory and the pages of its binary it read
	limitHits               int64   // times the group reached its limit (memory.failcnt): each one reclaims pages or kills
	oomKills                int64
	died                    bool
	gaveUp                  bool // neither settled nor died within its patience

	// Deleting every copy's namespace at once, with the same manager in the same group (for
	// the finalizers that wait on it: minimart's Helm uninstalls): until every copy was gone,
	// or until the deletion's patience ran out with left copies still there.
	toDeleted   time.Duration
	left        int
	deleteKills int64 // OOM kills while deleting
	// toDrained is from the deletion's start until the manager's work queues were empty, if
	// drained says they were before the deletion's patience ran out: where nothing waits on
	// the manager (etcd-cluster's clusters have no finalizer), one short of memory may fall
	// behind the deletion's watch events and passes while the copies go.
	toDrained time.Duration
	drained   bool
	// deletePasses and deleteRequests are the manager's passes and API requests by verb while
	// deleting (a manager that fights the namespaces' deletion makes and retries objects there).
	deletePasses   float64
	deleteRequests requestCounts
	// scrapes and deleteScrapes are what became of a Prometheus-like scraper's scrapes
	// (BENCH_SCALE_SCRAPE) until settled and while deleting.
	scrapes, deleteScrapes scrapeCounts
}

// TestBenchScaleLimited answers what memory each manager needs with a thousand objects, as a
// container's limit gives it: for each operator (BENCH_SCALE_OPERATORS), BENCH_SCALE_LIMITED
// (1000) copies of its sample created at once, first with the manager in a memory group
// without a limit, then in one limited to each of BENCH_SCALE_MEMORY (64Mi), each on a fresh
// manager. The group is shown to the manager where a container's is (so it sets its Go memory
// limit from it, as in a pod), and the binary's pages are dropped from the page cache before
// each start, so that the group pays for those it reads, as a container pays for its image's.
// It prints the time to settled and its ratio to the unlimited run's, CPU time, garbage
// collections, the group's peak charge, how often it hit its limit, and whether the kernel
// killed the manager; then, the same manager still in its group, deletes the copies'
// namespaces at once and prints how long until every copy was gone (the finalizers wait on
// the manager: minimart's Helm uninstalls), or how many were left when its patience ran out,
// and how long until the manager's work queues were empty (it had caught up with the deletion).
// Throughout, a scraper asks for the manager's metrics as a Prometheus would (BENCH_SCALE_SCRAPE,
// every 5 s giving up after 3 s), and the run prints how many scrapes were answered and failed.
// It fails only when the unlimited run does not settle, delete every copy or empty its queues, or when a
// limited manager does not say it took its Go memory limit from the group. The unlimited manager
// serves heap profiles at scaleProfiles while it runs (/debug/pprof/heap).
func TestBenchScaleLimited(t *testing.T) {
	ctx := context.Background()
	cfg, c := scaleCluster(t)
	n, err := strconv.Atoi(envOr("BENCH_SCALE_LIMITED", "1000"))
	must(t, err)
	sizes := benchList(t, "BENCH_SCALE_MEMORY", "64Mi")
	limits := make([]int64, 0, len(sizes))
	for _, l := range sizes {
		q, err := resource.ParseQuantity(l)
		if err != nil || q.Value() <= 0 {
			t.Fatalf("BENCH_SCALE_MEMORY: %q is not an amount of memory", l)
		}
		limits = append(limits, q.Value())
	}
	removeLeftoverGroups(t)
	operators := scaleOperators(ctx, t, cfg, c)
	runs := make([]limitedRun, 0, len(operators)*(1+len(limits)))
	for _, op := range operators {
		bin := buildBenchManager(t, op)
		unlimited := runLimited(ctx, t, c, op, bin, n, 0, scaleSettleLimit, scaleSettleLimit)
		if unlimited.settled < n || unlimited.left > 0 || !unlimited.drained {
			t.Errorf("%s without a memory limit: %d of %d copies settled, %d left after their namespaces were deleted, queues %s",
				op, unlimited.settled, n, unlimited.left, unlimited.queues())
		}
		runs = append(runs, unlimited)
		for _, limit := range limits {
			patience := max(limitedPatience*unlimited.toSettled, 2*time.Minute)
			deletePatience := max(limitedPatience*unlimited.toDeleted, 2*time.Minute)
			runs = append(runs, runLimited(ctx, t, c, op, bin, n, limit, patience, deletePatience))
		}
	}
	printLimitedTable(runs)
}

// runLimited runs the manager binary bin of op in a memory group limited to limit (0: none)
// with n copies of its sample until every copy settled, the manager died, or patience ran out;
// then deletes the copies' namespaces, waiting deletePatience at most for the copies to go with
// the same manager, and stops it.
func runLimited(ctx context.Context, t *testing.T, c client.Client, op, bin string, n int, limit int64, patience, deletePatience time.Duration) limitedRun {
	group := memoryGroup(t, op, limit)
	evictFromPageCache(t, bin)
	var profiles []string // the unlimited run serves heap profiles, for a look while the copies settle
	if limit == 0 {
		profiles = append(profiles, "--pprof-bind-address="+scaleProfiles)
	}
	manager := runBenchManager(t, bin, benchMetrics, group, profiles...)
	scrapes := startScraper(t)
	if limit > 0 {
		log, err := os.ReadFile(manager.Stdout.(benchLog).Name())
		must(t, err)
		if !strings.Contains(string(log), "Go memory limit set from the container's") {
			t.Errorf("%s in a group limited to %d bytes did not set its Go memory limit from it; its log:\n%s", op, limit, log)
		}
	}
	run := limitedRun{operator: op, limit: limit, objects: n}
	namespaces := scaleNamespaces(ctx, t, c, op, n)
	sample := scaleSample(t, op)
	gcBefore, cpuBefore := metricSample("go_gc_duration_seconds_count"), cpuTime(t, manager)
	start := time.Now()
	createCopies(ctx, t, c, sample, namespaces, n)
	for ; ; time.Sleep(time.Second) {
		if run.gaveUp = time.Since(start) > patience; run.gaveUp {
			break
		}
		if run.died = exited(t, manager.Process.Pid); run.died {
			break
		}
		settled, ready := settledCopies(ctx, t, c, sample)
		if run.settled = settled; scaleReadyOnKwok[op] {
			run.settled = ready
		}
		if run.settled == n {
			break
		}
	}
	run.toSettled = time.Since(start)
	run.cpu = cpuTime(t, manager) - cpuBefore
	run.scrapes = scrapes.counts()
	if !run.died {
		run.gcCycles = -1 // unknown: the scrape failed (a manager short of memory may not answer)
		if gcAfter := metricSample("go_gc_duration_seconds_count"); gcAfter > 0 {
			run.gcCycles = gcAfter - gcBefore
		}
		run.settledRSS = procMemory(t, manager.Process.Pid, "VmRSS:")
		run.settledAnon = procMemory(t, manager.Process.Pid, "RssAnon:")
	}
	run.groupPeak = groupValue(t, group, "memory.max_usage_in_bytes")
	run.limitHits = groupValue(t, group, "memory.failcnt")
	run.oomKills = oomKills(t, group)
	outcome := run.outcome()
	if outcome != "" {
		outcome = ", " + outcome
	}
	fmt.Printf("memory-limited, %s, limit %s: %d of %d settled in %s%s; CPU %s, GCs %s; group peak %.1f MiB, %d hits of its limit, %d OOM kills; "+
		"RSS %.1f MiB (anonymous %.1f MiB); scrapes %v\n",
		op, limitName(limit), run.settled, n, run.toSettled.Round(100*time.Millisecond), outcome,
		run.cpu.Round(100*time.Millisecond), run.gcs(), float64(run.groupPeak)/(1<<20), run.limitHits, run.oomKills,
		float64(run.settledRSS)/(1<<20), float64(run.settledAnon)/(1<<20), run.scrapes)
	if !run.died && !run.gaveUp {
		passes := metricSample("controller_runtime_reconcile_total")
		requests, err := requestsOf(benchMetrics)
		must(t, err)
		start := time.Now()
		run.toDeleted, run.left = deleteCopies(ctx, t, c, sample, namespaces, manager.Process.Pid, deletePatience)
		run.toDrained, run.drained = drainQueues(t, start, manager.Process.Pid, deletePatience)
		run.deleteKills = oomKills(t, group) - run.oomKills
		run.deleteScrapes = scrapes.counts().sub(run.scrapes)
		if run.drained {
			after, err := requestsOf(benchMetrics)
			must(t, err)
			run.deletePasses, run.deleteRequests = metricSample("controller_runtime_reconcile_total")-passes, after.sub(requests)
		}
		fmt.Printf("memory-limited, %s, limit %s: deleting the %d copies' namespaces: %d copies left after %s, queues %s; group peak %.1f MiB, %d OOM kills; "+
			"%.0f passes, requests %v; scrapes %v\n",
			op, limitName(limit), n, run.left, run.toDeleted.Round(100*time.Millisecond), run.queues(),
			float64(groupValue(t, group, "memory.max_usage_in_bytes"))/(1<<20), run.deleteKills, run.deletePasses, run.deleteRequests, run.deleteScrapes)
	}
	scrapes.stop()
	if run.died || run.gaveUp || run.left > 0 || (run.toDeleted > 0 && !run.drained) { // a fresh manager with memory enough removes what the copies need removed
		stopBenchManager(manager)
		manager = runBenchManager(t, bin, benchMetrics, "")
	}
	deleteNamespaces(t, c, scaleSettleLimit, namespaces...)
	stopBenchManager(manager)
	return run
}

// drainQueues waits until the manager's work queues are empty, the manager (pid) died or
// patience since start ran out: the time since start, and whether the queues were empty.
func drainQueues(t *testing.T, start time.Time, pid int, patience time.Duration) (time.Duration, bool) {
	for ; ; time.Sleep(time.Second) {
		if depth, _, err := queueSample(); err == nil && depth == 0 {
			return time.Since(start), true
		}
		if time.Since(start) > patience || exited(t, pid) {
			return time.Since(start), false
		}
	}
}

// queues says when the manager's work queues were empty after the deletion began.
func (r limitedRun) queues() string {
	if r.drained {
		return "empty after " + r.toDrained.Round(100*time.Millisecond).String()
	}
	return "not empty after " + r.toDrained.Round(time.Second).String()
}

// deleteCopies deletes the namespaces of sample's copies and waits until no copy is left,
// patience ran out or the manager (pid) died: how long that took, and how many copies were
// still there.
func deleteCopies(ctx context.Context, t *testing.T, c client.Client, sample *unstructured.Unstructured, namespaces []string, pid int, patience time.Duration) (time.Duration, int) {
	start := time.Now()
	for _, ns := range namespaces {
		must(t, client.IgnoreNotFound(c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})))
	}
	for ; ; time.Sleep(time.Second) {
		left := len(listCopies(ctx, t, c, sample))
		if left == 0 || time.Since(start) > patience || exited(t, pid) {
			return time.Since(start), left
		}
	}
}

// removeLeftoverGroups removes the memory groups an interrupted run left (empty once its
// managers are gone; a group that still holds a process stays).
func removeLeftoverGroups(t *testing.T) {
	leftovers, err := filepath.Glob(filepath.Join(memoryGroups, "quintet-bench-*"))
	must(t, err)
	for _, g := range leftovers {
		_ = os.Remove(g)
	}
}

// memoryGroup makes a memory group for a run of op limited to limit bytes (0: none), removed
// when the test ends (after the manager stopped: cleanups run last first).
func memoryGroup(t *testing.T, op string, limit int64) string {
	group := filepath.Join(memoryGroups, fmt.Sprintf("quintet-bench-%s-%d", op, time.Now().UnixNano()))
	must(t, os.Mkdir(group, 0o755))
	t.Cleanup(func() { _ = os.Remove(group) })
	value := "-1"
	if limit > 0 {
		value = strconv.FormatInt(limit, 10)
	}
	must(t, os.WriteFile(filepath.Join(group, "memory.limit_in_bytes"), []byte(value), 0o600))
	return group
}

// evictFromPageCache writes the file's pages out and drops them from the page cache, so that
// the process that reads it next is charged for them, as a container is for its image's files.
func evictFromPageCache(t *testing.T, path string) {
	f, err := os.Open(path) //nolint:gosec // the binary the benchmark built
	must(t, err)
	defer func() { _ = f.Close() }()
	must(t, f.Sync())
	must(t, unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED))
}

// exited says whether the process pid is gone: a zombie, since nothing waited for it yet.
func exited(t *testing.T, pid int) bool {
	state := procStat(t, pid)[0]
	return state == "Z" || state == "X"
}

// groupValue reads one of the memory group's counters.
func groupValue(t *testing.T, group, file string) int64 {
	data, err := os.ReadFile(filepath.Join(group, file)) //nolint:gosec // a cgroup file of the benchmark's group
	must(t, err)
	v, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	must(t, err)
	return v
}

// oomKills is how many processes of the memory group the kernel killed for want of memory.
func oomKills(t *testing.T, group string) int64 {
	data, err := os.ReadFile(filepath.Join(group, "memory.oom_control")) //nolint:gosec // a cgroup file of the benchmark's group
	must(t, err)
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			kills, err := strconv.ParseInt(v, 10, 64)
			must(t, err)
			return kills
		}
	}
	return 0
}

// outcome says how a run that did not settle ended: "died" or "stuck" ("" when it settled).
func (r limitedRun) outcome() string {
	switch {
	case r.died:
		return "died"
	case r.gaveUp:
		return "stuck"
	}
	return ""
}

// limitName is a memory group's limit as a quantity ("none" for 0).
func limitName(limit int64) string {
	if limit == 0 {
		return "none"
	}
	return resource.NewQuantity(limit, resource.BinarySI).String()
}

// gcs is the number of collections until settled, or "no scrape" when the manager did not
// answer the scrape that reads it (in 30 s).
func (r limitedRun) gcs() string {
	if r.gcCycles < 0 {
		return "no scrape"
	}
	return strconv.FormatFloat(r.gcCycles, 'f', 0, 64)
}

// printLimitedTable prints a row per run, each limited run's time against the same
// operator's unlimited one.
func printLimitedTable(runs []limitedRun) {
	fmt.Printf("\n== bench-scale, memory-limited: each manager in a memory group as a container's (the pages of its binary it reads counted), without a limit and then with one\n")
	fmt.Printf("%-17s %6s %7s %8s %10s %6s %8s %9s %10s %10s %5s %9s %9s %20s\n", "operator", "limit", "objects", "settled", "to settled", "ratio",
		"CPU", "GCs", "group peak", "limit hits", "OOM", "RSS then", "anon then", "deleted (ratio)")
	var unlimited limitedRun
	for _, r := range runs {
		if r.limit == 0 {
			unlimited = r
		}
		outcome := strings.TrimSpace(fmt.Sprintf("%d %s", r.settled, r.outcome()))
		fmt.Printf("%-17s %6s %7d %8s %10s %6.2f %8s %9s %9.1fM %10d %5d %8.1fM %8.1fM %20s\n", r.operator, limitName(r.limit), r.objects, outcome,
			r.toSettled.Round(100*time.Millisecond), r.toSettled.Seconds()/unlimited.toSettled.Seconds(), r.cpu.Round(100*time.Millisecond), r.gcs(),
			float64(r.groupPeak)/(1<<20), r.limitHits, r.oomKills, float64(r.settledRSS)/(1<<20), float64(r.settledAnon)/(1<<20), r.deletion(unlimited))
	}
}

// deletion says how deleting the copies' namespaces went: its time and ratio to the unlimited
// run's, how many copies were left when its patience ran out or the kernel killed the
// manager, or "-" when the run did not settle (a fresh manager deleted them).
func (r limitedRun) deletion(unlimited limitedRun) string {
	switch {
	case r.toDeleted == 0:
		return "-"
	case r.left > 0 && r.deleteKills > 0:
		return fmt.Sprintf("%d left, killed at %s", r.left, r.toDeleted.Round(time.Second))
	case r.left > 0:
		return fmt.Sprintf("%d left, %s", r.left, r.toDeleted.Round(time.Second))
	}
	took := fmt.Sprintf("%s (%.2f)", r.toDeleted.Round(100*time.Millisecond), r.toDeleted.Seconds()/unlimited.toDeleted.Seconds())
	if !r.drained {
		return took + ", behind"
	}
	return took
}
