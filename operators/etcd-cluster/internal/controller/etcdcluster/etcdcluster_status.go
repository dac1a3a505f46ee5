package etcdcluster

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/membership"
	"github.com/quintet-operators/quintet/shared/conditions"
)

// Steps of a pass that only observes: that of a paused cluster, and that of a cluster whose
// certificates cannot be used.
const (
	actionPaused membership.Action = "Paused"
	actionHeld   membership.Action = "Held"
)

// progressReasons maps a membership step to the Progressing reason it stands for.
var progressReasons = map[membership.Action]string{
	membership.ActionBootstrap:    v1beta2.ReasonBootstrapping,
	membership.ActionAdd:          v1beta2.ReasonScalingOut,
	membership.ActionStart:        v1beta2.ReasonScalingOut,
	membership.ActionPromote:      v1beta2.ReasonPromotingLearner,
	membership.ActionRemove:       v1beta2.ReasonScalingIn,
	membership.ActionReplace:      v1beta2.ReasonReplacingMember,
	membership.ActionWipe:         v1beta2.ReasonReplacingMember,
	membership.ActionRecover:      v1beta2.ReasonRecovering,
	membership.ActionRestart:      v1beta2.ReasonRestarting,
	membership.ActionRelease:      v1beta2.ReasonRestarting,
	membership.ActionAwaitVolumes: v1beta2.ReasonEarlierVolumes,
}

// memberCounts are the voting members, the healthy ones among them, and the learners.
type memberCounts struct{ voters, healthyVoters, learners int }

// outcome is what a pass saw and did: the membership report, the step it took (or tried),
// the refused upgrade and the error of the step, if any.
type outcome struct {
	report     membership.Report
	step       membership.Step
	upgradeErr error
	stepErr    error
	tls        tlsState
	now        time.Time // of the pass, for expiry
}

// setStatus computes the status from what a pass saw and did. It is pure.
func setStatus(c *v1beta2.EtcdCluster, o outcome, addr membership.Addresses) {
	c.Status.ObservedGeneration = c.Generation
	c.Status.ClientService = clientServiceName(c)
	c.Status.TLS = o.tls.status
	n := setMembers(c, o.report, addr)
	setConditions(c, o, n, addr)
	setCertificateExpiry(c, o.now)
}

// setCertificateExpiry warns, with TLS on, when certificates the operator cannot renew (static
// Secrets) expire within expiryWarning.
func setCertificateExpiry(c *v1beta2.EtcdCluster, now time.Time) {
	st := c.Status.TLS
	switch {
	case c.Spec.TLS == nil || st == nil || st.NotAfter == nil:
		meta.RemoveStatusCondition(&c.Status.Conditions, v1beta2.CertificateExpiringCondition)
	case c.Spec.TLS.CertManager != nil:
		conditions.Set(c, v1beta2.CertificateExpiringCondition, metav1.ConditionFalse, v1beta2.ReasonRenewedByCertManager,
			"cert-manager renews the certificates (by default when a third of their lifetime is left)")
	case c.Spec.TLS.Static == nil:
		conditions.Set(c, v1beta2.CertificateExpiringCondition, metav1.ConditionFalse, v1beta2.ReasonRenewedByOperator,
			"the operator renews its certificates when a third of their lifetime is left")
	case st.NotAfter.Sub(now) < expiryWarning:
		conditions.Set(c, v1beta2.CertificateExpiringCondition, metav1.ConditionTrue, v1beta2.ReasonExpiresSoon,
			fmt.Sprintf("a certificate of the static Secrets expires at %s and the operator cannot renew it: "+
				"replace the Secrets' certificates (members restart onto them one at a time)", st.NotAfter.UTC().Format(time.RFC3339)))
	default:
		conditions.Set(c, v1beta2.CertificateExpiringCondition, metav1.ConditionFalse, v1beta2.ReasonNotSoon,
			"the first certificate expires at "+st.NotAfter.UTC().Format(time.RFC3339))
	}
}

// lastDefragmented is a member's last defragmentation: the time its status held, or the
// last defragmentation's record when that is newer. The status patch does not lock: a pass
// that read the cluster from a cache older than the last one's write can lose a member's
// time, and the record (a field of its own) brings it back.
func lastDefragmented(st *v1beta2.EtcdClusterStatus, name string, t *metav1.Time) *metav1.Time {
	if d := st.Defragmentation; d != nil && d.Last != nil && d.Last.Member == name && (t == nil || t.Before(&d.Last.Time)) {
		return &d.Last.Time
	}
	return t
}

// setBlocked reports a pass that could not get the cluster's objects in place: Degraded
// (conditions.ErrorReason) and not Ready; what is known of the members is left as it was.
func setBlocked(c *v1beta2.EtcdCluster, err error) {
	c.Status.ObservedGeneration = c.Generation
	conditions.SetDegraded(c, err, nil, "")
	conditions.SetSummary(c, metav1.ConditionFalse, "", "") // Degraded is True: Ready says why
}

// setMembers records the members, leader and versions, and counts the members.
func setMembers(c *v1beta2.EtcdCluster, rep membership.Report, addr membership.Addresses) memberCounts {
	o := rep.Observed
	st := &c.Status
	var n memberCounts
	if o.Reachable {
		defragmented := map[string]*metav1.Time{}
		for _, m := range st.Members {
			defragmented[m.ID] = m.LastDefragmentTime
		}
		st.Members = st.Members[:0]
		for _, m := range o.Members {
			id, name := fmt.Sprintf("%x", m.ID), addr.Name(m.Ordinal)
			st.Members = append(st.Members, v1beta2.MemberStatus{Name: name, ID: id, Ready: m.Healthy, Learner: m.Learner,
				DBSize: m.DBSize, DBSizeInUse: m.DBSizeInUse, LastDefragmentTime: lastDefragmented(st, name, defragmented[id])})
			switch {
			case m.Learner:
				n.learners++
			case m.Healthy:
				n.voters++
				n.healthyVoters++
			default:
				n.voters++
			}
		}
		slices.SortFunc(st.Members, func(a, b v1beta2.MemberStatus) int { return strings.Compare(a.Name, b.Name) })
		st.LeaderID = ""
		if rep.Leader != 0 {
			st.LeaderID = fmt.Sprintf("%x", rep.Leader)
		}
		if rep.Version != "" {
			st.CurrentVersion = rep.Version // the lowest a member runs
		}
	} else {
		// Nothing answers: what was known of the members is no longer true.
		for i := range st.Members {
			st.Members[i].Ready = false
		}
		st.LeaderID = ""
	}
	st.Size = int32(len(st.Members))         //nolint:gosec // at most 10
	st.ReadyMembers = int32(n.healthyVoters) //nolint:gosec // at most 10
	st.TargetVersion = ""
	if c.Spec.Version != st.CurrentVersion {
		st.TargetVersion = c.Spec.Version
	}
	return n
}

// setConditions sets Available, Progressing, Degraded and Ready, and the phase.
func setConditions(c *v1beta2.EtcdCluster, oc outcome, n memberCounts, addr membership.Addresses) {
	rep, step, upgradeErr := oc.report, oc.step, oc.upgradeErr
	st, o := &c.Status, rep.Observed
	voters, healthyVoters := n.voters, n.healthyVoters
	available := o.Reachable && healthyVoters >= membership.Quorum(voters)
	switch {
	case available:
		conditions.Set(c, v1beta2.AvailableCondition, metav1.ConditionTrue, v1beta2.ReasonQuorumAvailable,
			fmt.Sprintf("%d of %d voting members are healthy", healthyVoters, voters))
	case o.Reachable:
		conditions.Set(c, v1beta2.AvailableCondition, metav1.ConditionFalse, v1beta2.ReasonQuorumLost,
			fmt.Sprintf("only %d of %d voting members are healthy", healthyVoters, voters))
	default:
		conditions.Set(c, v1beta2.AvailableCondition, metav1.ConditionFalse, v1beta2.ReasonMembersUnreachable,
			fmt.Sprintf("no member answers at %s", addr.ClientURL(0)))
	}

	setRestored(c, oc, available)

	progress, changing := progressReasons[step.Action]
	if step.Action == membership.ActionWait && step.ID != 0 {
		progress, changing = v1beta2.ReasonPromotingLearner, true
	}
	switch {
	case changing:
		conditions.Set(c, conditions.ProgressingCondition, metav1.ConditionTrue, progress, step.Reason)
	case step.Action == actionPaused:
		conditions.Set(c, conditions.ProgressingCondition, metav1.ConditionFalse, v1beta2.ReasonPaused, step.Reason)
	case step.Action == actionHeld && oc.tls.issuing():
		conditions.Set(c, conditions.ProgressingCondition, metav1.ConditionTrue, oc.tls.reason, step.Reason)
	case step.Action == actionHeld:
		conditions.Set(c, conditions.ProgressingCondition, metav1.ConditionFalse, oc.tls.reason, step.Reason)
	case !o.Reachable:
		conditions.Set(c, conditions.ProgressingCondition, metav1.ConditionFalse, v1beta2.ReasonMembersUnreachable, "waiting for members to answer")
	case step.Action == membership.ActionRefuse:
		conditions.Set(c, conditions.ProgressingCondition, metav1.ConditionFalse, v1beta2.ReasonUnsafeMembershipSkip, step.Reason)
	case st.TargetVersion != "" && upgradeErr == nil:
		conditions.Set(c, conditions.ProgressingCondition, metav1.ConditionTrue, v1beta2.ReasonUpgrading,
			fmt.Sprintf("rolling members from %s to %s one at a time", st.CurrentVersion, st.TargetVersion))
	case slices.ContainsFunc(o.Workload, func(w membership.Workload) bool { return w.Exists && w.Outdated }):
		conditions.Set(c, conditions.ProgressingCondition, metav1.ConditionTrue, v1beta2.ReasonRestarting, step.Reason)
	default:
		conditions.Set(c, conditions.ProgressingCondition, metav1.ConditionFalse, conditions.ReasonStable, step.Reason)
	}

	reason, message := degraded(oc, healthyVoters, voters, available)
	if reason == conditions.ReasonAsExpected {
		conditions.Set(c, conditions.DegradedCondition, metav1.ConditionFalse, reason, message)
	} else {
		conditions.Set(c, conditions.DegradedCondition, metav1.ConditionTrue, reason, message)
	}

	ready := available && reason == conditions.ReasonAsExpected && step.Action == membership.ActionNone && n.learners == 0 && healthyVoters == voters &&
		voters == int(c.Spec.Size) && upgradeErr == nil && st.TargetVersion == ""
	if ready {
		conditions.SetSummary(c, metav1.ConditionTrue, v1beta2.ReasonAllMembersReady,
			fmt.Sprintf("%d members, all healthy voters, leader %s", voters, st.LeaderID))
	} else {
		// Neither Degraded nor Progressing may be True (a paused cluster): Progressing says why.
		p := conditions.Get(c, conditions.ProgressingCondition)
		conditions.SetSummary(c, metav1.ConditionFalse, p.Reason, p.Message)
	}
	st.Phase = phase(c, o, changing, step)
}

// degraded is the reason and message of the Degraded condition: the first thing, in
// order of what the user must do something about, that needs attention.
func degraded(oc outcome, healthyVoters, voters int, available bool) (string, string) {
	rep, step, upgradeErr := oc.report, oc.step, oc.upgradeErr
	o := rep.Observed
	if e, ok := restoreFailure(oc); ok {
		return e.Reason, fmt.Sprintf("the first member cannot start from the snapshot, and waits: %v", oc.stepErr)
	}
	switch {
	case oc.stepErr != nil:
		return conditions.ErrorReason(oc.stepErr), fmt.Sprintf("%s of member %d failed, and is retried: %v", step.Action, step.Ordinal, oc.stepErr)
	case oc.tls.err != nil && !oc.tls.issuing():
		return oc.tls.reason, oc.tls.err.Error()
	case step.Action == membership.ActionRefuse:
		return v1beta2.ReasonUnsafeMembershipSkip, step.Reason
	case upgradeErr != nil:
		return v1beta2.ReasonUpgradeRefused, upgradeErr.Error()
	case oc.tls.issuing() && o.Workloads == 0:
		return conditions.ReasonAsExpected, "no member yet: " + oc.tls.err.Error()
	case step.Action == membership.ActionAwaitVolumes && o.Workloads == 0:
		return conditions.ReasonAsExpected, "no member yet: " + step.Reason
	case !o.Reachable:
		return v1beta2.ReasonMembersUnreachable,
			"the operator cannot reach any member; pods may not be running etcd, or their DNS names do not resolve from the operator"
	}
	for _, a := range rep.Alarms {
		if a.Type == "NOSPACE" {
			return v1beta2.ReasonNoSpace, fmt.Sprintf("member %x reached its backend quota (alarm NOSPACE): the cluster takes no writes. "+
				"Compact and defragment, or raise --quota-backend-bytes in pod.etcdArgs, then disarm the alarm (etcdctl alarm disarm)", a.MemberID)
		}
	}
	if len(rep.Alarms) > 0 {
		return v1beta2.ReasonAlarm, fmt.Sprintf("member %x raised alarm %s", rep.Alarms[0].MemberID, rep.Alarms[0].Type)
	}
	var failing []string
	for _, w := range o.Workload {
		if w.Exists && w.Failure != "" {
			failing = append(failing, w.Failure)
		}
	}
	switch {
	case len(failing) > 0:
		return v1beta2.ReasonMemberFailing, strings.Join(failing, "; ") +
			": the member keeps its data and nothing else changes until the spec works again (revert the change to bring it back)"
	case healthyVoters < voters && !available:
		return v1beta2.ReasonQuorumLost, fmt.Sprintf("only %d of %d voting members are healthy", healthyVoters, voters)
	case healthyVoters < voters:
		return v1beta2.ReasonMembersUnhealthy, fmt.Sprintf("%d of %d voting members do not answer; the quorum holds", voters-healthyVoters, voters)
	}
	return conditions.ReasonAsExpected, "all members answer"
}

func phase(c *v1beta2.EtcdCluster, o membership.Observed, changing bool, step membership.Step) v1beta2.Phase {
	switch {
	case step.Action == actionPaused:
		return v1beta2.PhasePaused
	case !o.Reachable && len(c.Status.Members) == 0:
		return v1beta2.PhaseCreating
	case !o.Reachable:
		return v1beta2.PhaseFailed
	case changing:
		return v1beta2.PhaseScaling
	case c.Status.TargetVersion != "":
		return v1beta2.PhaseUpgrading
	}
	return v1beta2.PhaseRunning
}
