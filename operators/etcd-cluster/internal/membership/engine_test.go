package membership

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/etcd"
)

// newEngine drives real etcd processes on loopback.
func newEngine(t *testing.T) (*Engine, *processRunner) {
	rt := newProcessRunner(t)
	return &Engine{Dial: etcd.New, Runner: rt, Addr: rt}, rt
}

// converge runs passes until the membership matches desired, and returns the steps taken.
// It fails on a refused step, or when a pass would have two learners at once.
func converge(t *testing.T, e *Engine, desired int) []Step {
	t.Helper()
	ctx := context.Background()
	var steps []Step
	var waiting string
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		step, report, err := e.Reconcile(ctx, desired)
		if err != nil {
			t.Fatalf("pass after %v: %v", actions(steps), err)
		}
		learners := 0
		for _, m := range report.Observed.Members {
			if m.Learner {
				learners++
			}
		}
		if learners > 1 {
			t.Fatalf("%d learners at once: members are added one at a time", learners)
		}
		switch step.Action {
		case ActionNone:
			return steps
		case ActionRefuse:
			t.Fatalf("refused: %s", step.Reason)
		case ActionWait:
			waiting = step.Reason
			time.Sleep(200 * time.Millisecond)
		default:
			steps = append(steps, step)
		}
	}
	t.Fatalf("no convergence to %d members; steps so far %v, last waiting: %s", desired, actions(steps), waiting)
	return nil
}

func actions(steps []Step) []Action {
	out := make([]Action, len(steps))
	for i, s := range steps {
		out[i] = s.Action
	}
	return out
}

func count(steps []Step, a Action) int {
	n := 0
	for _, s := range steps {
		if s.Action == a {
			n++
		}
	}
	return n
}

// kv is a plain etcd client to the members 0..n-1, for reading and writing keys.
func kv(t *testing.T, rt *processRunner, n int) *clientv3.Client {
	t.Helper()
	endpoints := make([]string, n)
	for i := range endpoints {
		endpoints[i] = rt.ClientURL(i)
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func put(t *testing.T, c *clientv3.Client, key, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Put(ctx, key, value); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, c *clientv3.Client, key string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 {
		t.Fatalf("key %s not found", key)
	}
	return string(resp.Kvs[0].Value)
}

// voterNames waits until every member answers as a voter, and lists them by name: a pass
// does not wait for a member that is starting, so one just restarted may not answer yet.
func voterNames(t *testing.T, e *Engine) map[string]uint64 {
	t.Helper()
	var report Report
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var err error
		if report, err = e.Observe(context.Background()); err != nil {
			t.Fatal(err)
		}
		if allVoters(report) {
			names := map[string]uint64{}
			for _, m := range report.Observed.Members {
				names[e.Addr.Name(m.Ordinal)] = m.ID
			}
			return names
		}
	}
	t.Fatalf("not every member answers as a voter: %+v", report.Observed)
	return nil
}

func allVoters(report Report) bool {
	for _, m := range report.Observed.Members {
		if m.Learner || !m.Healthy {
			return false
		}
	}
	return report.Observed.Reachable
}

func TestMembershipScalesOneMemberAtATimeAndKeepsTheData(t *testing.T) {
	t.Parallel()
	e, rt := newEngine(t)
	if steps := converge(t, e, 1); count(steps, ActionBootstrap) != 1 || count(steps, ActionRelease) != 1 {
		t.Fatalf("bootstrap steps %v", actions(steps))
	}
	put(t, kv(t, rt, 1), "/here", "test")

	steps := converge(t, e, 3)
	if count(steps, ActionAdd) != 2 || count(steps, ActionPromote) != 2 || count(steps, ActionRelease) != 2 {
		t.Fatalf("1→3 took %v; want two adds as learners, each released and promoted", actions(steps))
	}
	steps = converge(t, e, 5)
	if count(steps, ActionAdd) != 2 || count(steps, ActionPromote) != 2 {
		t.Fatalf("3→5 took %v", actions(steps))
	}
	if got := voterNames(t, e); len(got) != 5 {
		t.Fatalf("members after 3→5: %v", got)
	}
	steps = converge(t, e, 3)
	if count(steps, ActionRemove) != 2 {
		t.Fatalf("5→3 took %v; want two removals through the cluster API", actions(steps))
	}
	got := voterNames(t, e)
	for _, name := range []string{"member-0", "member-1", "member-2"} {
		if _, ok := got[name]; !ok || len(got) != 3 {
			t.Fatalf("members after 5→3: %v", got)
		}
	}
	if v := get(t, kv(t, rt, 3), "/here"); v != "test" {
		t.Fatalf("/here = %q after 1→3→5→3, want test", v)
	}
}

func TestMembershipRefusesARemovalThatWouldLoseQuorum(t *testing.T) {
	t.Parallel()
	e, rt := newEngine(t)
	converge(t, e, 3)
	// member-0 is down (not lost: it may come back). Shrinking to 2 would remove the
	// healthy member-2 and leave one healthy voter of two: no quorum.
	rt.stop(0)
	var step Step
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var err error
		if step, _, err = e.Reconcile(context.Background(), 2); err != nil {
			t.Fatal(err)
		}
		if step.Action == ActionRefuse {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if step.Action != ActionRefuse || step.Ordinal != 2 {
		t.Fatalf("step = %+v; want the removal of member-2 refused", step)
	}
	report, err := e.Observe(context.Background())
	if err != nil || len(report.Observed.Members) != 3 {
		t.Fatalf("the refused removal must leave 3 members: %+v, %v", report.Observed.Members, err)
	}
}
