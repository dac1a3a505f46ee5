package membership

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/etcd"
)

// The fault tests of etcd's own operational guide and of the etcd operators' e2e suites,
// against real etcd members: each writes keys while the fault happens, lets the engine
// bring the cluster back to 3 voting members, and reads back every key etcd acknowledged.

// writer puts keys while a fault happens and remembers those etcd acknowledged.
type writer struct {
	c     *clientv3.Client
	mu    sync.Mutex
	acked map[string]string
	stop  chan struct{}
	done  chan struct{}
}

func startWriter(t *testing.T, c *clientv3.Client, prefix string) *writer {
	t.Helper()
	w := &writer{c: c, acked: map[string]string{}, stop: make(chan struct{}), done: make(chan struct{})}
	for i := range 50 { // written before the fault
		w.put(fmt.Sprintf("%s/before/%04d", prefix, i))
	}
	if len(w.acked) != 50 {
		t.Fatalf("only %d of 50 keys written before the fault", len(w.acked))
	}
	go func() {
		defer close(w.done)
		for i := 0; ; i++ {
			select {
			case <-w.stop:
				return
			default:
			}
			w.put(fmt.Sprintf("%s/during/%06d", prefix, i))
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return w
}

func (w *writer) put(key string) {
	value := fmt.Sprintf("%x", sha256.Sum256([]byte(key)))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := w.c.Put(ctx, key, value); err == nil {
		w.mu.Lock()
		w.acked[key] = value
		w.mu.Unlock()
	}
}

// checkKeys stops the writer and reads every acknowledged key back from the cluster: the
// count and a checksum of keys and values must match.
func (w *writer) checkKeys(t *testing.T, c *clientv3.Client, prefix string) {
	t.Helper()
	close(w.stop)
	<-w.done
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Get(ctx, prefix+"/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]string{}
	for _, kv := range resp.Kvs {
		read[string(kv.Key)] = string(kv.Value)
	}
	for k, v := range w.acked {
		if read[k] != v {
			t.Fatalf("key %s was acknowledged with %q but reads back %q", k, v, read[k])
		}
	}
	acked := checksum(w.acked)
	t.Logf("keys acknowledged %d, read back %d (some writes time out unacknowledged and may still land); checksum of the acknowledged ones %s, read back %s",
		len(w.acked), len(read), acked, checksum(pick(read, w.acked)))
}

func checksum(kvs map[string]string) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(kvs)) {
		_, _ = fmt.Fprintf(h, "%s=%s\n", k, kvs[k])
	}
	return fmt.Sprintf("%x", h.Sum(nil))[:12]
}

func pick(from, keys map[string]string) map[string]string {
	out := map[string]string{}
	for k := range keys {
		out[k] = from[k]
	}
	return out
}

// expectSameMembers fails unless the voting members are those of before, with their IDs.
func expectSameMembers(t *testing.T, e *Engine, before map[string]uint64) {
	t.Helper()
	if after := voterNames(t, e); !maps.Equal(before, after) {
		t.Fatalf("member IDs changed: before %v after %v", before, after)
	}
}

// threeMembers runs a converged 3-member cluster with a writer on it.
func threeMembers(t *testing.T) (*Engine, *processRunner, *clientv3.Client, map[string]uint64) {
	e, rt := newEngine(t)
	converge(t, e, 3)
	return e, rt, kv(t, rt, 3), voterNames(t, e)
}

func TestMembershipKeepsMembersThatCrashOrLoseTheirPodOnTheirData(t *testing.T) {
	t.Parallel()
	e, rt, c, before := threeMembers(t)
	w := startWriter(t, c, "/crash")
	steps := make([]Step, 0, 16)
	for i := range 6 {
		if i%2 == 0 {
			rt.crash(i % 3)
		} else {
			rt.deletePod(i % 3)
		}
		steps = append(steps, converge(t, e, 3)...)
	}
	if n := count(steps, ActionReplace) + count(steps, ActionAdd) + count(steps, ActionWipe); n != 0 {
		t.Fatalf("members that kept their data were replaced: %v", actions(steps))
	}
	if count(steps, ActionRelease) != 3 {
		t.Fatalf("steps %v; want each of the 3 deleted pods released on its data", actions(steps))
	}
	expectSameMembers(t, e, before)
	w.checkKeys(t, c, "/crash")
}

func TestMembershipReplacesAMemberWhoseVolumeIsGone(t *testing.T) {
	t.Parallel()
	e, rt, c, before := threeMembers(t)
	w := startWriter(t, c, "/lost")
	rt.loseVolume(1)
	steps := converge(t, e, 3)
	if count(steps, ActionReplace) != 1 || count(steps, ActionAdd) != 1 || count(steps, ActionPromote) != 1 {
		t.Fatalf("replacement took %v; want a removal, an add as learner and a promotion", actions(steps))
	}
	after := voterNames(t, e)
	if len(after) != 3 || after["member-1"] == before["member-1"] {
		t.Fatalf("member-1 must come back as a new member: before %v after %v", before, after)
	}
	w.checkKeys(t, c, "/lost")
}

// passes runs passes towards three members for d and returns the steps taken.
func passes(t *testing.T, e *Engine, d time.Duration) ([]Step, Report) {
	t.Helper()
	var steps []Step
	var report Report
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		step, rep, err := e.Reconcile(context.Background(), 3)
		if err != nil {
			t.Fatal(err)
		}
		steps, report = append(steps, step), rep
	}
	return steps, report
}

func TestMembershipReplacesAnUnreachableMemberAfterTheDelayButNeverOneFailingItsSpec(t *testing.T) {
	t.Parallel()
	e, rt, c, before := threeMembers(t)
	e.Outages, e.Key, e.ReplaceAfter = &Outages{}, "test", 2*time.Second
	w := startWriter(t, c, "/unreachable")

	rt.fail(2, "CrashLoopBackOff: etcd exited with code 1 after a flag change")
	steps, _ := passes(t, e, 3*e.ReplaceAfter)
	if n := count(steps, ActionReplace) + count(steps, ActionRefuse); n != 0 {
		t.Fatalf("a member failing because of its spec was acted on: %v", actions(steps))
	}
	rt.mu.Lock() // the spec is reverted: its container starts again, on its data
	rt.slots[2].failure = ""
	rt.mu.Unlock()
	rt.crash(2)
	converge(t, e, 3)
	expectSameMembers(t, e, before)

	rt.stop(1) // its node is gone: the workload stays, nothing answers
	steps, _ = passes(t, e, e.ReplaceAfter/2)
	if count(steps, ActionReplace) != 0 {
		t.Fatalf("replaced before the delay: %v", actions(steps))
	}
	later, _ := passes(t, e, e.ReplaceAfter) // the delay runs out
	steps = append(append(steps, later...), converge(t, e, 3)...)
	if count(steps, ActionReplace) != 1 || count(steps, ActionAdd) != 1 {
		t.Fatalf("steps %v; want member 1 replaced once after the delay", actions(steps))
	}
	if after := voterNames(t, e); after["member-1"] == before["member-1"] || len(after) != 3 {
		t.Fatalf("member-1 must come back as a new member: before %v after %v", before, after)
	}
	w.checkKeys(t, c, "/unreachable")
}

func TestMembershipNeverReplacesAMemberWithANoSpaceAlarm(t *testing.T) {
	t.Parallel()
	e, rt := newEngine(t)
	rt.args[2] = []string{"--quota-backend-bytes=8388608"}
	converge(t, e, 3)
	before := voterNames(t, e)
	c := kv(t, rt, 3)
	w := startWriter(t, c, "/full")

	big := strings.Repeat("x", 1<<20)
	for i := 0; ; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := c.Put(ctx, fmt.Sprintf("/fill/%d", i), big)
		cancel()
		if err != nil {
			t.Logf("put %d MiB, then: %v", i, err)
			break
		}
		if i > 64 {
			t.Fatal("the quota of member 2 never filled")
		}
	}
	e.Outages, e.Key, e.ReplaceAfter = &Outages{}, "test", time.Second
	steps, report := passes(t, e, 5*time.Second)
	for _, s := range steps {
		if s.Action != ActionNone && s.Action != ActionWait { // Wait: a slow answer under load
			t.Fatalf("steps %v; a cluster with a NOSPACE alarm is left as it is", actions(steps))
		}
	}
	if !slices.ContainsFunc(report.Alarms, func(a etcd.Alarm) bool { return a.Type == "NOSPACE" && a.MemberID == before["member-2"] }) {
		t.Fatalf("alarms %+v; want NOSPACE of member-2 (%x)", report.Alarms, before["member-2"])
	}
	expectSameMembers(t, e, before)
	w.checkKeys(t, c, "/full")
}

func TestMembershipRecoversFromItsVolumesWhenTheWorkloadsAreDeleted(t *testing.T) {
	t.Parallel()
	e, rt, c, before := threeMembers(t)
	w := startWriter(t, c, "/recover")
	rt.deleteWorkloads()
	steps := converge(t, e, 3)
	if count(steps, ActionRecover) != 1 || count(steps, ActionBootstrap)+count(steps, ActionAdd)+count(steps, ActionReplace) != 0 {
		t.Fatalf("steps %v; want the workloads made again for their volumes, nothing bootstrapped or replaced", actions(steps))
	}
	expectSameMembers(t, e, before)
	w.checkKeys(t, c, "/recover")
}

func TestMembershipFinishesAReplacementAStoppedManagerLeftHalfway(t *testing.T) {
	t.Parallel()
	_, rt, c, before := threeMembers(t)
	w := startWriter(t, c, "/halfway")
	rt.stop(1)
	// The manager removed member 1 and stopped before wiping its volume. etcd refuses the
	// removal for a few seconds after the last promotion (unhealthy cluster): retried.
	removed := false
	for deadline := time.Now().Add(30 * time.Second); !removed && time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := c.MemberRemove(ctx, before["member-1"])
		cancel()
		removed = err == nil
	}
	if !removed {
		t.Fatal("etcd never accepted the removal of member-1")
	}
	restarted := &Engine{Dial: etcd.New, Runner: rt, Addr: rt}
	steps := converge(t, restarted, 3)
	if count(steps, ActionWipe) != 1 || count(steps, ActionAdd) != 1 || count(steps, ActionReplace)+count(steps, ActionRemove) != 0 {
		t.Fatalf("steps %v; want the stale volume wiped and one member added, once", actions(steps))
	}
	if after := voterNames(t, restarted); after["member-1"] == before["member-1"] || len(after) != 3 {
		t.Fatalf("member-1 must come back as a new member: before %v after %v", before, after)
	}
	w.checkKeys(t, c, "/halfway")
}

// A pass does not wait on members that refuse connections, whatever its timeouts: a member
// whose pod is gone, or a cluster none of whose members run yet, must not hold a worker
// while other clusters wait for one. The timeouts here are longer than the test's deadline.
func TestMembershipPassDoesNotWaitOnMembersThatRefuseConnections(t *testing.T) {
	t.Parallel()
	e, rt, _, _ := threeMembers(t)
	e.Dial, e.RequestTimeout = etcd.NewDialer(time.Hour, nil), time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	rt.stop(2)
	report, err := e.Observe(ctx)
	if err != nil || ctx.Err() != nil {
		t.Fatalf("observe with member 2 stopped: %v, context: %v", err, ctx.Err())
	}
	healthy := map[int]bool{}
	for _, m := range report.Observed.Members {
		healthy[m.Ordinal] = m.Healthy
	}
	if want := map[int]bool{0: true, 1: true, 2: false}; !report.Observed.Reachable || !maps.Equal(healthy, want) {
		t.Fatalf("observed %+v; want members 0 and 1 healthy, 2 not", report.Observed)
	}

	rt.stop(0)
	rt.stop(1)
	report, err = e.Observe(ctx)
	if err != nil || ctx.Err() != nil {
		t.Fatalf("observe with every member stopped: %v, context: %v", err, ctx.Err())
	}
	if report.Observed.Reachable {
		t.Fatalf("observed %+v; want unreachable", report.Observed)
	}
}
