package robustness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

func op(client int, req Request, resp Response, call, ret int64) Op {
	return Op{Client: client, Request: req, Response: resp, Call: call, Return: ret}
}

var keys = []string{"k"}

func TestCheckAcceptsALinearizableHistoryWithUnknownWrites(t *testing.T) {
	ops := []Op{
		op(0, Request{Kind: Put, Key: "k", Value: "a"}, Response{}, 0, 10),
		op(1, Request{Kind: Get, Key: "k"}, Response{Found: true, Value: "a"}, 5, 15), // overlaps the put
		op(0, Request{Kind: Put, Key: "k", Value: "b"}, Response{Unknown: true, Err: "deadline"}, 20, 30),
		op(1, Request{Kind: CAS, Key: "k", Value: "c", Expected: "b"}, Response{Succeeded: true}, 40, 50), // b was applied
		op(1, Request{Kind: GetSerializable, Key: "k"}, Response{Found: true, Value: "a"}, 60, 70),        // stale, allowed
		op(0, Request{Kind: Get, Key: "k"}, Response{Err: "unavailable"}, 60, 70),                         // failed: no effect
		op(1, Request{Kind: Range}, Response{KVs: map[string]string{"k": "c"}}, 80, 90),
	}
	r := Check(ops, keys, map[string]string{"k": "c"}, time.Minute)
	if !r.OK() || r.Issued != 7 || r.Acknowledged != 5 || r.Unknown != 1 || r.Failed != 1 {
		t.Fatalf("report %s, lost %v, stale %v", r, r.Lost, r.StaleReads)
	}
	if r.LongestWriteGap != 40 {
		t.Fatalf("longest time without a write: %s, want 40ns (from the CAS at 50 to the end at 90)", r.LongestWriteGap)
	}
}

func TestCheckFindsAStaleLinearizableRead(t *testing.T) {
	ops := []Op{
		op(0, Request{Kind: Put, Key: "k", Value: "a"}, Response{}, 0, 10),
		op(0, Request{Kind: Put, Key: "k", Value: "b"}, Response{}, 20, 30),
		op(1, Request{Kind: Get, Key: "k"}, Response{Found: true, Value: "a"}, 40, 50), // after b was acknowledged
	}
	r := Check(ops, keys, map[string]string{"k": "b"}, time.Minute)
	if r.Linearizable != porcupine.Illegal || r.OK() {
		t.Fatalf("a read of a replaced value must not be linearizable: %s", r)
	}
	dir := t.TempDir()
	if err := r.WriteEvidence(dir, ops); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"history.json", "linearizability.html"} {
		if info, err := os.Stat(filepath.Join(dir, f)); err != nil || info.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestCheckFindsAnAcknowledgedWriteLost(t *testing.T) {
	ops := []Op{
		op(0, Request{Kind: Put, Key: "k", Value: "a"}, Response{}, 0, 10),
		op(0, Request{Kind: Put, Key: "k", Value: "b"}, Response{}, 20, 30),
		op(1, Request{Kind: Put, Key: "k", Value: "c"}, Response{Unknown: true}, 5, 8), // may have happened
	}
	// After the traffic the key holds a: b, acknowledged after a, is gone.
	r := Check(ops, keys, map[string]string{"k": "a"}, time.Minute)
	if len(r.Lost) != 1 || r.OK() {
		t.Fatalf("lost %v: %s", r.Lost, r)
	}
	// Holding c is fine: the unknown put may have been applied last.
	if r := Check(ops, keys, map[string]string{"k": "c"}, time.Minute); len(r.Lost) != 0 {
		t.Fatalf("an unknown write may be the last: lost %v", r.Lost)
	}
	// Absent is not: nothing deleted it.
	if r := Check(ops, keys, map[string]string{}, time.Minute); len(r.Lost) != 1 {
		t.Fatalf("absent after acknowledged puts: lost %v", r.Lost)
	}
}

// A traffic cut short by a fault may issue a key's only put and give up on it: the key
// absent at the end is no loss (seen on the real node: the leader killed 2 s into the traffic).
func TestCheckAcceptsAnAbsentKeyWhoseWritesMayNotHaveApplied(t *testing.T) {
	for name, ops := range map[string][]Op{
		"an unknown put alone": {op(0, Request{Kind: Put, Key: "k", Value: "a"}, Response{Unknown: true, Err: "context canceled"}, 0, 10)},
		"an acknowledged put, then an unknown delete that began before it": {
			op(1, Request{Kind: Delete, Key: "k"}, Response{Unknown: true}, 0, 5),
			op(0, Request{Kind: Put, Key: "k", Value: "a"}, Response{}, 10, 20),
		},
		"an acknowledged put, then an acknowledged delete": {
			op(0, Request{Kind: Put, Key: "k", Value: "a"}, Response{}, 0, 10),
			op(0, Request{Kind: Delete, Key: "k"}, Response{}, 20, 30),
		},
	} {
		if r := Check(ops, keys, map[string]string{}, time.Minute); len(r.Lost) != 0 || !r.OK() {
			t.Errorf("%s: lost %v: %s", name, r.Lost, r)
		}
	}
	// but an acknowledged put after an acknowledged delete must stand
	ops := []Op{
		op(0, Request{Kind: Delete, Key: "k"}, Response{}, 0, 10),
		op(0, Request{Kind: Put, Key: "k", Value: "a"}, Response{}, 20, 30),
		op(1, Request{Kind: Put, Key: "k", Value: "b"}, Response{Unknown: true}, 25, 40),
	}
	if r := Check(ops, keys, map[string]string{}, time.Minute); len(r.Lost) != 1 {
		t.Errorf("absent after an acknowledged put that nothing deleted: lost %v", r.Lost)
	}
}

func TestCheckFindsASerializableReadOfAValueNeverWritten(t *testing.T) {
	ops := []Op{op(1, Request{Kind: GetSerializable, Key: "k"}, Response{Found: true, Value: "ghost"}, 0, 10)}
	if r := Check(ops, keys, map[string]string{}, time.Minute); len(r.StaleReads) != 1 || r.OK() {
		t.Fatalf("%s: %v", r, r.StaleReads)
	}
}

func TestTableHasALinePerScenario(t *testing.T) {
	rows := []Row{
		{Scenario: "node-wiped", Traffic: 61 * time.Second, Restarts: 1, Replacements: 1,
			Report: Report{Issued: 900, Acknowledged: 880, Failed: 12, Unknown: 8, Linearizable: porcupine.Ok, LongestWriteGap: 1049 * time.Millisecond}},
		{Scenario: "scale", Traffic: 60 * time.Second, Report: Report{Issued: 5, Linearizable: porcupine.Illegal, Lost: []string{"k"}}},
	}
	lines := strings.Split(strings.TrimRight(Table(rows), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("table:\n%s", strings.Join(lines, "\n"))
	}
	for i, want := range [][]string{
		{"scenario", "traffic", "issued", "acknowledged", "failed", "unknown", "lost", "linearizable", "member", "restarts", "replacements"},
		{"node-wiped", "1m1s", "900", "880", "12", "8", "0", "Ok", "1.049s", "1", "1"},
		{"scale", "1m0s", "5", "0", "0", "0", "1", "Illegal", "0s", "0", "0"},
	} {
		if got := strings.Fields(lines[i]); !containsInOrder(got, want) {
			t.Errorf("line %d %q, want the fields %q in order", i, lines[i], want)
		}
	}
}

// containsInOrder reports whether want appear in got in that order.
func containsInOrder(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

func TestAnswersShowWhichMemberHeldEachClientAndForHowLong(t *testing.T) {
	s := int64(time.Second)
	get := Request{Kind: Get, Key: "k"}
	ops := []Op{
		op(0, get, Response{Member: 1}, 0, s/10),
		op(1, get, Response{Member: 2}, 0, s/5),
		op(0, get, Response{Member: 1}, s/10, s/2),
		op(1, get, Response{Err: "deadline"}, s/5, 2*s), // held: no member answered
		op(0, get, Response{Member: 1}, s/2, 3*s),       // held by member 1, then answered again
		op(1, get, Response{Member: 3}, 2*s, 21*s/10),   // dialled again: another member
	}
	r := Check(ops, keys, map[string]string{}, time.Minute)
	names := map[uint64]string{1: "m-1", 2: "m-2", 3: "m-3"}
	got := r.AnswersText(func(m uint64) string { return names[m] })
	want := "client 0: m-1 100ms-500ms, m-1 3s-3s; client 1: m-2 200ms-200ms, m-3 2.1s-2.1s"
	if got != want {
		t.Fatalf("answers:\n got %s\nwant %s", got, want)
	}
}
