// Package robustness checks what etcd clients see while an etcd cluster is under faults, as
// etcd's own robustness suite (tests/robustness) and Jepsen's etcd analysis do: concurrent
// clients issue puts, gets (linearizable and serializable), deletes, compare-and-swaps and
// ranges on a small key space, every operation is recorded with its call and return times,
// and the history is checked for linearizability with porcupine and for acknowledged writes
// that were lost. Unknown outcomes (timeouts, a connection cut mid-request) are recorded as
// such: a write that may or may not have happened, not a failure.
package robustness

import (
	"fmt"
	"sync"
	"time"
)

// Kind is what an operation does.
type Kind string

// The operations of the traffic.
const (
	Put             Kind = "put"
	Get             Kind = "get"              // linearizable
	GetSerializable Kind = "get-serializable" // from the member asked, possibly stale
	Delete          Kind = "delete"
	CAS             Kind = "cas" // a txn: if the key holds Expected (absent when ExpectAbsent), put Value
	Range           Kind = "range"
)

// Request is an operation as issued.
type Request struct {
	Kind         Kind   `json:"kind"`
	Key          string `json:"key,omitempty"`
	Value        string `json:"value,omitempty"`
	Expected     string `json:"expected,omitempty"`
	ExpectAbsent bool   `json:"expectAbsent,omitempty"`
}

// Writes reports whether the request may change the store.
func (r Request) Writes() bool { return r.Kind == Put || r.Kind == Delete || r.Kind == CAS }

// Response is what the client got back.
type Response struct {
	// Unknown: the request failed in a way that leaves its outcome unknown (a write that may
	// have been applied). Failed reads are recorded with Err and no effect.
	Unknown bool   `json:"unknown,omitempty"`
	Err     string `json:"err,omitempty"`
	// Found and Value: a get's answer.
	Found bool   `json:"found,omitempty"`
	Value string `json:"value,omitempty"`
	// Succeeded: whether a compare-and-swap's comparison held.
	Succeeded bool `json:"succeeded,omitempty"`
	// KVs: a range's answer, by key.
	KVs map[string]string `json:"kvs,omitempty"`
	// Member is the ID of the member that answered (its response header's).
	Member uint64 `json:"member,omitempty"`
}

// Acknowledged reports whether the request completed with an answer.
func (r Response) Acknowledged() bool { return !r.Unknown && r.Err == "" }

// Op is one operation of a history: who issued it, what it asked and got, and when it was
// called and returned, in nanoseconds since the history began.
type Op struct {
	Client   int      `json:"client"`
	Request  Request  `json:"request"`
	Response Response `json:"response"`
	Call     int64    `json:"call"`
	Return   int64    `json:"return"`
}

func (o Op) String() string {
	return fmt.Sprintf("client %d %s %q: %+v [%d, %d]", o.Client, o.Request.Kind, o.Request.Key, o.Response, o.Call, o.Return)
}

// History records the operations of concurrent clients.
type History struct {
	start time.Time
	mu    sync.Mutex
	ops   []Op
}

// NewHistory starts a history now.
func NewHistory() *History { return &History{start: time.Now()} }

// Since is now, in the history's time.
func (h *History) Since() int64 { return int64(time.Since(h.start)) }

// Record adds an operation.
func (h *History) Record(op Op) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, op)
}

// Ops returns the operations recorded so far.
func (h *History) Ops() []Op {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Op(nil), h.ops...)
}
