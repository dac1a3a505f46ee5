package membership

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/etcd"
)

// Addresses names members and their URLs by ordinal.
type Addresses interface {
	Name(ordinal int) string
	PeerURL(ordinal int) string
	ClientURL(ordinal int) string
}

// Engine observes a cluster and carries out one planned step per call.
type Engine struct {
	Dial   etcd.Dialer
	Runner Runner
	Addr   Addresses
	// RequestTimeout bounds each etcd request; DefaultRequestTimeout when zero.
	RequestTimeout time.Duration
	// Outages remembers unreachable members across passes, under Key; a member is
	// unreachable for replacement after ReplaceAfter. Without Outages no member ever is.
	Outages      *Outages
	Key          string
	ReplaceAfter time.Duration
}

// Report is what a pass saw, for the status.
type Report struct {
	Observed Observed
	Leader   uint64
	// Version is the lowest etcd version a member answering runs.
	Version string
	// Alarms raised in the cluster (NOSPACE, CORRUPT).
	Alarms []etcd.Alarm
}

// Reconcile observes, records which volume holds which member's data, plans towards
// desired members and applies the step.
func (e *Engine) Reconcile(ctx context.Context, desired int) (Step, Report, error) {
	report, err := e.Observe(ctx)
	if err != nil {
		return Step{}, report, err
	}
	if err := e.recordData(ctx, report.Observed); err != nil {
		return Step{}, report, err
	}
	step := Plan(desired, report.Observed)
	err = e.Apply(ctx, step, report.Observed)
	if errors.Is(err, etcd.ErrNotYetSafe) || errors.Is(err, etcd.ErrLearnerNotReady) {
		return Step{Action: ActionWait, Ordinal: step.Ordinal, ID: step.ID, Reason: err.Error()}, report, nil
	}
	return step, report, err
}

func (e *Engine) timeout() time.Duration {
	if e.RequestTimeout > 0 {
		return e.RequestTimeout
	}
	return DefaultRequestTimeout
}

// DefaultRequestTimeout bounds an etcd request when the operator is not told otherwise.
const DefaultRequestTimeout = 3 * time.Second

// Observe reads the workloads, the membership, each member's health and version, the
// alarms, and which members the leader is connected to.
func (e *Engine) Observe(ctx context.Context) (Report, error) {
	workloads, err := e.Runner.Workloads(ctx)
	if err != nil {
		return Report{}, err
	}
	n := 0
	for _, w := range workloads {
		n += boolInt(w.Exists)
	}
	report := Report{Observed: Observed{Workloads: n, Workload: workloads}}
	if n == 0 {
		return report, nil
	}
	c, err := e.dial(ctx, n, none)
	if err != nil {
		return report, nil // unreachable, not an error of ours
	}
	defer func() { _ = c.Close() }()
	members, err := request(ctx, e.timeout(), c.MemberList)
	if err != nil {
		return report, nil
	}
	report.Observed.Reachable = true
	leaderURL := ""
	for _, m := range members {
		ordinal, ok := e.ordinalOf(m, n+len(members))
		if !ok {
			continue // a member this operator did not create: left alone
		}
		member := Member{Ordinal: ordinal, ID: m.ID, Learner: m.IsLearner, Started: m.Name != ""}
		if ordinal < n {
			st, err := request(ctx, e.timeout(), func(ctx context.Context) (etcd.Status, error) { return c.Status(ctx, e.Addr.ClientURL(ordinal)) })
			if err == nil {
				member.Healthy, member.Index, member.Version = true, st.RaftIndex, st.Version
				member.DBSize, member.DBSizeInUse = st.DBSize, st.DBSizeInUse
				if st.Leader == m.ID {
					report.Leader, report.Observed.LeaderIndex, leaderURL = m.ID, st.RaftIndex, e.Addr.ClientURL(ordinal)
				}
				if report.Version == "" || versionLess(st.Version, report.Version) {
					report.Version = st.Version
				}
			}
		}
		report.Observed.Members = append(report.Observed.Members, member)
	}
	report.Alarms, _ = request(ctx, e.timeout(), c.Alarms) // unknown alarms are no alarms
	e.observeOutages(ctx, c, &report.Observed, leaderURL)
	return report, nil
}

// observeOutages marks members unreachable once neither the operator nor the leader has
// reached them for ReplaceAfter. A member the leader is connected to is never unreachable,
// nor one whose pod waits or fails.
func (e *Engine) observeOutages(ctx context.Context, c etcd.Client, o *Observed, leaderURL string) {
	if e.Outages == nil {
		return
	}
	var active map[uint64]bool
	if leaderURL != "" {
		var err error
		if active, err = request(ctx, e.timeout(), func(ctx context.Context) (map[uint64]bool, error) { return c.ActivePeers(ctx, leaderURL) }); err != nil {
			active = nil
		}
	}
	now := time.Now()
	for i := range o.Members {
		m := &o.Members[i]
		key := fmt.Sprintf("%s/%x", e.Key, m.ID)
		// An outage counts from when nothing explains it: not while the member's pod waits or
		// fails for a reason of its spec, which a replacement would not mend.
		w := o.workload(m.Ordinal)
		if m.Healthy || active == nil || active[m.ID] || w.Waiting || w.Failure != "" {
			e.Outages.Up(key)
			continue
		}
		m.Unreachable = e.ReplaceAfter > 0 && e.Outages.Down(key, now) >= e.ReplaceAfter
	}
}

// recordData notes on each serving workload's volume the member whose data it holds, so
// a workload that comes back on another volume is known to have lost it.
func (e *Engine) recordData(ctx context.Context, o Observed) error {
	for _, m := range o.Members {
		if w := o.workload(m.Ordinal); m.Healthy && m.Started && w.Exists && !w.Waiting && !w.VolumeGone && w.DataOf != m.ID {
			if err := e.Runner.RecordData(ctx, m.Ordinal, m.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// none is no ordinal: dial every member.
const none = -1

// dial opens a client to the members of ordinals below workloads, but except.
func (e *Engine) dial(ctx context.Context, workloads, except int) (etcd.Client, error) {
	endpoints := make([]string, 0, workloads)
	for i := range workloads {
		if i != except {
			endpoints = append(endpoints, e.Addr.ClientURL(i))
		}
	}
	return e.Dial(ctx, endpoints)
}

// ordinalOf finds a member's ordinal by its name, or by its peer URL before it started.
func (e *Engine) ordinalOf(m etcd.Member, limit int) (int, bool) {
	for i := range limit {
		if m.Name == e.Addr.Name(i) {
			return i, true
		}
		if m.Name == "" && len(m.PeerURLs) > 0 && m.PeerURLs[0] == e.Addr.PeerURL(i) {
			return i, true
		}
	}
	return 0, false
}

// initialCluster lists the members etcd lists, with ordinal among them: what a member
// joining on empty data must be told, taken from the membership the operator just changed.
func (e *Engine) initialCluster(o Observed, ordinal int) string {
	var parts []string
	for _, m := range o.Members {
		if m.Ordinal != ordinal {
			parts = append(parts, e.Addr.Name(m.Ordinal)+"="+e.Addr.PeerURL(m.Ordinal))
		}
	}
	parts = append(parts, e.Addr.Name(ordinal)+"="+e.Addr.PeerURL(ordinal))
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// Apply carries out step. Each step is one change that a later pass can tell was made:
// a manager stopped between two steps finds the job where it left it.
func (e *Engine) Apply(ctx context.Context, step Step, o Observed) error {
	switch step.Action {
	case ActionBootstrap:
		return e.Runner.Scale(ctx, 1)
	case ActionRecover, ActionStart:
		return e.Runner.Scale(ctx, step.Ordinal+1)
	case ActionRelease:
		if step.New {
			return e.Runner.Release(ctx, step.Ordinal, e.Addr.Name(0)+"="+e.Addr.PeerURL(0), "new")
		}
		return e.Runner.Release(ctx, step.Ordinal, e.initialCluster(o, step.Ordinal), "existing")
	case ActionAdd:
		return e.withClient(ctx, o.Workloads, none, func(ctx context.Context, c etcd.Client) error {
			_, err := c.MemberAddAsLearner(ctx, e.Addr.PeerURL(step.Ordinal))
			return err
		})
	case ActionPromote:
		return e.withClient(ctx, o.Workloads, none, func(ctx context.Context, c etcd.Client) error {
			return c.MemberPromote(ctx, step.ID)
		})
	case ActionRemove:
		if step.ID != 0 {
			if err := e.remove(ctx, o, step); err != nil {
				return err
			}
		}
		return e.Runner.Scale(ctx, step.Ordinal)
	case ActionReplace:
		if err := e.remove(ctx, o, step); err != nil {
			return err
		}
		return e.Runner.Wipe(ctx, step.Ordinal)
	case ActionWipe:
		return e.Runner.Wipe(ctx, step.Ordinal)
	case ActionRestart:
		return e.Runner.Restart(ctx, step.Ordinal)
	case ActionNone, ActionWait, ActionRefuse, ActionAwaitVolumes:
		return nil
	}
	return fmt.Errorf("unknown membership action %q", step.Action)
}

// remove removes step's member, asking the other members: the one removed stops serving
// as it applies its removal, and would answer "server stopped" for a removal that happened.
func (e *Engine) remove(ctx context.Context, o Observed, step Step) error {
	return e.withClient(ctx, o.Workloads, step.Ordinal, func(ctx context.Context, c etcd.Client) error { return c.MemberRemove(ctx, step.ID) })
}

// withClient runs fn with a client to the cluster's members (but except) and a request timeout.
func (e *Engine) withClient(ctx context.Context, workloads, except int, fn func(context.Context, etcd.Client) error) error {
	c, err := e.dial(ctx, workloads, except)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	ctx, cancel := context.WithTimeout(ctx, e.timeout())
	defer cancel()
	return fn(ctx, c)
}

// request runs one etcd request within the request timeout.
func request[T any](ctx context.Context, timeout time.Duration, fn func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return fn(ctx)
}

// versionLess compares etcd versions such as 3.6.8 part by part; an unreadable part counts as 0.
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(pa), len(pb)) {
		x, y := versionPart(pa, i), versionPart(pb, i)
		if x != y {
			return x < y
		}
	}
	return false
}

func versionPart(parts []string, i int) int {
	if i >= len(parts) {
		return 0
	}
	n, _ := strconv.Atoi(parts[i])
	return n
}

// Defragment defragments the member of ordinal, within timeout, and returns its status after.
// The member serves nothing meanwhile: the caller picks one the cluster can spare.
func (e *Engine) Defragment(ctx context.Context, o Observed, ordinal int, timeout time.Duration) (etcd.Status, error) {
	c, err := e.dial(ctx, o.Workloads, none)
	if err != nil {
		return etcd.Status{}, err
	}
	defer func() { _ = c.Close() }()
	url := e.Addr.ClientURL(ordinal)
	if _, err := request(ctx, timeout, func(ctx context.Context) (struct{}, error) { return struct{}{}, c.Defragment(ctx, url) }); err != nil {
		return etcd.Status{}, err
	}
	return request(ctx, e.timeout(), func(ctx context.Context) (etcd.Status, error) { return c.Status(ctx, url) })
}
