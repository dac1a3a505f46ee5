package robustness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	return r
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
