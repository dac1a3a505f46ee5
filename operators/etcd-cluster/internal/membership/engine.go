package membership

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/etcd"
)

// Runtime runs the workloads of members, ordinals 0..n-1: a StatefulSet in a cluster,
// processes in tests.
type Runtime interface {
	// Workloads returns how many member workloads exist.
	Workloads(ctx context.Context) (int, error)
	// Start makes the workload of ordinal (the next one) exist; on first start it joins
	// with initialCluster ("name=peerURL,...") and state "new" or "existing".
	Start(ctx context.Context, ordinal int, initialCluster, state string) error
	// Stop removes the workload of ordinal (the highest) and its data.
	Stop(ctx context.Context, ordinal int) error
	// Wipe restarts the workload of ordinal with empty data, joining initialCluster.
	Wipe(ctx context.Context, ordinal int, initialCluster string) error
	// Lost reports whether the workload of ordinal lost its data for good.
	Lost(ctx context.Context, ordinal int) (bool, error)
}

// Addresses names members and their URLs by ordinal.
type Addresses interface {
	Name(ordinal int) string
	PeerURL(ordinal int) string
	ClientURL(ordinal int) string
}

// Engine observes a cluster and carries out one planned step per call.
type Engine struct {
	Dial    etcd.Dialer
	Runtime Runtime
	Addr    Addresses
	// RequestTimeout bounds each etcd request; DefaultRequestTimeout when zero.
	RequestTimeout time.Duration
}

// Report is what a pass saw, for the status.
type Report struct {
	Observed Observed
	Leader   uint64
	Version  string // the leader's etcd version
}

// Reconcile observes, plans towards desired members and applies the step.
func (e *Engine) Reconcile(ctx context.Context, desired int) (Step, Report, error) {
	report, err := e.Observe(ctx)
	if err != nil {
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

// Observe reads the membership and each member's health through the cluster API.
func (e *Engine) Observe(ctx context.Context) (Report, error) {
	workloads, err := e.Runtime.Workloads(ctx)
	if err != nil {
		return Report{}, err
	}
	report := Report{Observed: Observed{Workloads: workloads}}
	if workloads == 0 {
		return report, nil
	}
	c, err := e.dial(ctx, workloads, none)
	if err != nil {
		return report, nil // unreachable, not an error of ours
	}
	defer func() { _ = c.Close() }()
	listCtx, cancel := context.WithTimeout(ctx, e.timeout())
	members, err := c.MemberList(listCtx)
	cancel()
	if err != nil {
		return report, nil
	}
	report.Observed.Reachable = true
	for _, m := range members {
		ordinal, ok := e.ordinalOf(m, workloads+len(members))
		if !ok {
			continue // a member this operator did not create: left alone
		}
		member := Member{Ordinal: ordinal, ID: m.ID, Learner: m.IsLearner, Started: m.Name != ""}
		if ordinal < workloads {
			statusCtx, cancel := context.WithTimeout(ctx, e.timeout())
			st, err := c.Status(statusCtx, e.Addr.ClientURL(ordinal))
			cancel()
			if err == nil {
				member.Healthy, member.Index = true, st.RaftIndex
				if st.Leader == m.ID {
					report.Leader, report.Version, report.Observed.LeaderIndex = m.ID, st.Version, st.RaftIndex
				}
			}
			if member.Lost, err = e.Runtime.Lost(ctx, ordinal); err != nil {
				return report, err
			}
		}
		report.Observed.Members = append(report.Observed.Members, member)
	}
	return report, nil
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

// initialCluster lists the members to join, with extra added.
func (e *Engine) initialCluster(o Observed, extra int) string {
	var parts []string
	for _, m := range o.Members {
		if m.Ordinal != extra {
			parts = append(parts, e.Addr.Name(m.Ordinal)+"="+e.Addr.PeerURL(m.Ordinal))
		}
	}
	parts = append(parts, e.Addr.Name(extra)+"="+e.Addr.PeerURL(extra))
	return strings.Join(parts, ",")
}

// Apply carries out step.
func (e *Engine) Apply(ctx context.Context, step Step, o Observed) error {
	switch step.Action {
	case ActionBootstrap:
		return e.Runtime.Start(ctx, 0, e.Addr.Name(0)+"="+e.Addr.PeerURL(0), "new")
	case ActionAdd:
		return e.withClient(ctx, o.Workloads, none, func(ctx context.Context, c etcd.Client) error {
			if _, err := c.MemberAddAsLearner(ctx, e.Addr.PeerURL(step.Ordinal)); err != nil {
				return err
			}
			if step.Ordinal < o.Workloads {
				// The workload of a replaced member: restart it with empty data.
				return e.Runtime.Wipe(ctx, step.Ordinal, e.initialCluster(o, step.Ordinal))
			}
			return e.Runtime.Start(ctx, step.Ordinal, e.initialCluster(o, step.Ordinal), "existing")
		})
	case ActionStart:
		return e.Runtime.Start(ctx, step.Ordinal, e.initialCluster(o, step.Ordinal), "existing")
	case ActionPromote:
		return e.withClient(ctx, o.Workloads, none, func(ctx context.Context, c etcd.Client) error {
			return c.MemberPromote(ctx, step.ID)
		})
	case ActionRemove:
		if step.ID != 0 {
			// Asked of the other members: the one removed stops serving as it applies its
			// removal, and would answer "server stopped" for a removal that happened.
			err := e.withClient(ctx, o.Workloads, step.Ordinal, func(ctx context.Context, c etcd.Client) error { return c.MemberRemove(ctx, step.ID) })
			if err != nil {
				return err
			}
		}
		return e.Runtime.Stop(ctx, step.Ordinal)
	case ActionReplace:
		return e.withClient(ctx, o.Workloads, step.Ordinal, func(ctx context.Context, c etcd.Client) error { return c.MemberRemove(ctx, step.ID) })
	case ActionNone, ActionWait, ActionRefuse:
		return nil
	}
	return fmt.Errorf("unknown membership action %q", step.Action)
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
