package robustness

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Report is what a history says.
type Report struct {
	// Issued operations, of them acknowledged, failed (reads that got an error: no effect)
	// and of unknown outcome (writes that got an error).
	Issued, Acknowledged, Failed, Unknown int
	// Linearizable is porcupine's verdict: Ok, Illegal, or Unknown when it ran out of time.
	Linearizable porcupine.CheckResult
	// Lost are keys whose final value no write could have left: an acknowledged write is
	// gone that nothing acknowledged after it replaced.
	Lost []string
	// StaleReads are serializable reads of a value never written to their key.
	StaleReads []string
	// LongestWriteGap is the longest time without an acknowledged write.
	LongestWriteGap time.Duration
	// Answers are, for each client, the members that answered it, in turn: where each
	// client's connection was, and when it got no answer.
	Answers map[int][]Answered

	info porcupine.LinearizationInfo
}

// OK reports whether the history is linearizable and lost nothing.
func (r Report) OK() bool {
	return r.Linearizable == porcupine.Ok && len(r.Lost) == 0 && len(r.StaleReads) == 0
}

func (r Report) String() string {
	return fmt.Sprintf("%d issued, %d acknowledged, %d failed, %d unknown; linearizable: %s; acknowledged writes lost: %d; "+
		"serializable reads of unwritten values: %d; longest time without a write: %s",
		r.Issued, r.Acknowledged, r.Failed, r.Unknown, r.Linearizable, len(r.Lost), len(r.StaleReads), r.LongestWriteGap.Round(time.Millisecond))
}

// Check checks a history of traffic over keys, whose final state (read linearizably once
// the traffic stopped) is final, giving porcupine at most timeout.
func Check(ops []Op, keys []string, final map[string]string, timeout time.Duration) Report {
	r := Report{Issued: len(ops)}
	end, reader := int64(0), 0
	for _, op := range ops {
		reader = max(reader, op.Client+1)
		switch {
		case op.Response.Unknown:
			r.Unknown++
		case op.Response.Acknowledged():
			r.Acknowledged++
		default:
			r.Failed++
		}
		end = max(end, op.Return)
	}
	// The final read is the last operation of the history, by a client of its own.
	withFinal := append(slices.Clone(ops), Op{Client: reader, Request: Request{Kind: Range}, Response: Response{KVs: final}, Call: end + 1, Return: end + 2})
	r.Linearizable, r.info = porcupine.CheckOperationsVerbose(model, operations(withFinal, keys), timeout)
	for _, k := range keys {
		v, found := final[k]
		if !finalHasAWrite(ops, k, v, found) {
			r.Lost = append(r.Lost, fmt.Sprintf("key %s holds %q (found %v): no write left that", k, v, found))
		}
	}
	r.StaleReads = serializableReadsOfUnwritten(ops)
	r.LongestWriteGap = longestWriteGap(ops, end)
	r.Answers = answers(ops)
	return r
}

// Answered is a stretch of a client's answers from one member, each less than answerGap after
// the one before, in the history's time: a client's connection stays on one member until
// the client dials again.
type Answered struct {
	Member     uint64
	From, Till time.Duration
}

// answerGap is the silence that ends a stretch of answers: a client that waits longer for
// one is held.
const answerGap = time.Second

// answers groups each client's answers into stretches from one member.
func answers(ops []Op) map[int][]Answered {
	byReturn := slices.SortedFunc(slices.Values(ops), func(a, b Op) int { return cmp.Compare(a.Return, b.Return) })
	out := map[int][]Answered{}
	for _, op := range byReturn {
		if op.Response.Member == 0 {
			continue
		}
		at := time.Duration(op.Return)
		stretches := out[op.Client]
		if n := len(stretches); n > 0 && stretches[n-1].Member == op.Response.Member && at-stretches[n-1].Till < answerGap {
			stretches[n-1].Till = at
			continue
		}
		out[op.Client] = append(stretches, Answered{Member: op.Response.Member, From: at, Till: at})
	}
	return out
}

// AnswersText says, for each client, which member answered it when, naming the members
// with name: "client 0: m-1 0s-12.3s, m-1 1m15s-1m20s; client 1: ...".
func (r Report) AnswersText(name func(member uint64) string) string {
	clients := slices.Sorted(maps.Keys(r.Answers))
	parts := make([]string, 0, len(clients))
	for _, c := range clients {
		stretches := make([]string, 0, len(r.Answers[c]))
		for _, a := range r.Answers[c] {
			stretches = append(stretches, fmt.Sprintf("%s %s-%s", name(a.Member), a.From.Round(100*time.Millisecond), a.Till.Round(100*time.Millisecond)))
		}
		parts = append(parts, fmt.Sprintf("client %d: %s", c, strings.Join(stretches, ", ")))
	}
	return strings.Join(parts, "; ")
}

// finalHasAWrite reports whether the final value of key (found or absent) was left by a write
// that nothing acknowledged later replaced: a put or compare-and-swap of that value, a
// delete, or no write at all for an absent key.
func finalHasAWrite(ops []Op, key, value string, found bool) bool {
	var writes []Op
	for _, op := range ops {
		applied := op.Response.Unknown || (op.Response.Acknowledged() && (op.Request.Kind != CAS || op.Response.Succeeded))
		if op.Request.Key == key && op.Request.Writes() && applied {
			writes = append(writes, op)
		}
	}
	if !found {
		return !slices.ContainsFunc(writes, func(w Op) bool { return mustStand(writes, w) })
	}
	for _, w := range writes {
		replaced := slices.ContainsFunc(writes, func(later Op) bool {
			return later.Response.Acknowledged() && !w.Response.Unknown && later.Call > w.Return
		})
		switch {
		case replaced:
		case w.Request.Kind == Delete && !found:
			return true
		case w.Request.Kind != Delete && found && w.Request.Value == value:
			return true
		}
	}
	return false
}

// mustStand reports whether the applied write w of a key must be what the key holds at the
// end: an acknowledged put or compare-and-swap that no later acknowledged write replaced and
// no delete could follow (an acknowledged one that ended after w began, or one whose outcome
// is unknown: it may apply at any time). A write whose outcome is unknown never must stand: it
// may not have applied.
func mustStand(writes []Op, w Op) bool {
	if w.Response.Unknown || w.Request.Kind == Delete {
		return false
	}
	return !slices.ContainsFunc(writes, func(o Op) bool {
		later := o.Response.Acknowledged() && !o.Response.Unknown && o.Call > w.Return
		deletable := o.Request.Kind == Delete && (o.Response.Unknown || o.Return > w.Call)
		return later || deletable
	})
}

// serializableReadsOfUnwritten are the serializable reads that found a value no write gave
// their key: a stale read is allowed, an invented one is not.
func serializableReadsOfUnwritten(ops []Op) []string {
	written := map[string]bool{}
	for _, op := range ops {
		if op.Request.Kind == Put || op.Request.Kind == CAS {
			written[op.Request.Key+"\x00"+op.Request.Value] = true
		}
	}
	var out []string
	for _, op := range ops {
		if op.Request.Kind == GetSerializable && op.Response.Found && !written[op.Request.Key+"\x00"+op.Response.Value] {
			out = append(out, op.String())
		}
	}
	return out
}

// longestWriteGap is the longest time, from the start of the history to end, without an
// acknowledged write.
func longestWriteGap(ops []Op, end int64) time.Duration {
	returns := []int64{0}
	for _, op := range ops {
		if op.Request.Writes() && op.Response.Acknowledged() {
			returns = append(returns, op.Return)
		}
	}
	slices.Sort(returns)
	returns = append(returns, end)
	gap := int64(0)
	for i := 1; i < len(returns); i++ {
		gap = max(gap, returns[i]-returns[i-1])
	}
	return time.Duration(gap)
}

// WriteEvidence writes the history (history.json) and porcupine's visualization
// (linearizability.html) into dir, for a failed check.
func (r Report) WriteEvidence(dir string, ops []Op) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	data, err := json.MarshalIndent(ops, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "history.json"), data, 0o600); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "linearizability.html")) //nolint:gosec // the test's own output folder
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	return porcupine.Visualize(model, r.info, f)
}
