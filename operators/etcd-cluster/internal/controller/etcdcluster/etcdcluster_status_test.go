package etcdcluster

import (
	"errors"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/etcd"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/membership"
	"github.com/quintet-operators/quintet/shared/conditions"
)

func healthy(n int) []membership.Member {
	ms := make([]membership.Member, n)
	for i := range ms {
		ms[i] = membership.Member{Ordinal: i, ID: uint64(0xa0 + i), Started: true, Healthy: true}
	}
	return ms
}

func TestSetStatus(t *testing.T) {
	reachable := func(ms []membership.Member) membership.Report {
		return membership.Report{Observed: membership.Observed{Reachable: true, Members: ms, Workloads: len(ms)}, Leader: 0xa0, Version: "3.6.8"}
	}
	learning := append(healthy(2), membership.Member{Ordinal: 2, ID: 0xa2, Learner: true, Started: true, Healthy: true})
	sick := healthy(3)
	sick[2].Healthy = false
	lostQuorum := healthy(3)
	lostQuorum[1].Healthy, lostQuorum[2].Healthy = false, false
	withAlarm := func(r membership.Report, alarm string) membership.Report {
		r.Alarms = []etcd.Alarm{{MemberID: 0xa1, Type: alarm}}
		return r
	}
	failing := func(r membership.Report) membership.Report {
		r.Observed.Workload = []membership.Workload{{Ordinal: 2, Exists: true, Failure: "pod e-2: CrashLoopBackOff"}}
		return r
	}
	rolling := func(r membership.Report) membership.Report {
		r.Observed.Workload = []membership.Workload{{Ordinal: 0, Exists: true, Outdated: true}, {Ordinal: 1, Exists: true, Outdated: true},
			{Ordinal: 2, Exists: true, Unready: true}}
		return r
	}
	type want struct {
		ready, available, progressing, degraded string
		readyTrue                               bool
		phase                                   v1beta2.Phase
	}
	tests := []struct {
		name    string
		report  membership.Report
		step    membership.Step
		upgrade error
		want    want
	}{
		{"healthy and complete", reachable(healthy(3)), membership.Step{Action: membership.ActionNone},
			nil, want{v1beta2.ReasonAllMembersReady, v1beta2.ReasonQuorumAvailable, conditions.ReasonStable, conditions.ReasonAsExpected, true, v1beta2.PhaseRunning}},
		{"unreachable", membership.Report{Observed: membership.Observed{Workloads: 1}}, membership.Step{Action: membership.ActionWait},
			nil, want{v1beta2.ReasonMembersUnreachable, v1beta2.ReasonMembersUnreachable, v1beta2.ReasonMembersUnreachable, v1beta2.ReasonMembersUnreachable, false, v1beta2.PhaseCreating}},
		{"learner catching up", reachable(learning), membership.Step{Action: membership.ActionWait, Ordinal: 2, ID: 0xa2},
			nil, want{v1beta2.ReasonPromotingLearner, v1beta2.ReasonQuorumAvailable, v1beta2.ReasonPromotingLearner, conditions.ReasonAsExpected, false, v1beta2.PhaseScaling}},
		{"unsafe removal refused", reachable(sick), membership.Step{Action: membership.ActionRefuse, Reason: "would lose quorum"},
			nil, want{v1beta2.ReasonUnsafeMembershipSkip, v1beta2.ReasonQuorumAvailable, v1beta2.ReasonUnsafeMembershipSkip, v1beta2.ReasonUnsafeMembershipSkip, false, v1beta2.PhaseRunning}},
		{"unsupported upgrade", reachable(healthy(3)), membership.Step{Action: membership.ActionNone},
			errors.New("skips a minor"), want{v1beta2.ReasonUpgradeRefused, v1beta2.ReasonQuorumAvailable, conditions.ReasonStable, v1beta2.ReasonUpgradeRefused, false, v1beta2.PhaseUpgrading}},
		{"one member down, the quorum holds", reachable(sick), membership.Step{Action: membership.ActionNone},
			nil, want{v1beta2.ReasonMembersUnhealthy, v1beta2.ReasonQuorumAvailable, conditions.ReasonStable, v1beta2.ReasonMembersUnhealthy, false, v1beta2.PhaseRunning}},
		{"quorum lost", reachable(lostQuorum), membership.Step{Action: membership.ActionWait},
			nil, want{v1beta2.ReasonQuorumLost, v1beta2.ReasonQuorumLost, conditions.ReasonStable, v1beta2.ReasonQuorumLost, false, v1beta2.PhaseRunning}},
		{"a member's quota is full", withAlarm(reachable(healthy(3)), "NOSPACE"), membership.Step{Action: membership.ActionNone},
			nil, want{v1beta2.ReasonNoSpace, v1beta2.ReasonQuorumAvailable, conditions.ReasonStable, v1beta2.ReasonNoSpace, false, v1beta2.PhaseRunning}},
		{"a member fails because of the spec", failing(reachable(sick)), membership.Step{Action: membership.ActionNone},
			nil, want{v1beta2.ReasonMemberFailing, v1beta2.ReasonQuorumAvailable, conditions.ReasonStable, v1beta2.ReasonMemberFailing, false, v1beta2.PhaseRunning}},
		{"members restart onto a new spec", reachable(healthy(3)), membership.Step{Action: membership.ActionRestart, Ordinal: 2},
			nil, want{v1beta2.ReasonRestarting, v1beta2.ReasonQuorumAvailable, v1beta2.ReasonRestarting, conditions.ReasonAsExpected, false, v1beta2.PhaseScaling}},
		{"a restart waits for the member restarted before to be Ready", rolling(reachable(healthy(3))), membership.Step{Action: membership.ActionWait, Ordinal: 2},
			nil, want{v1beta2.ReasonRestarting, v1beta2.ReasonQuorumAvailable, v1beta2.ReasonRestarting, conditions.ReasonAsExpected, false, v1beta2.PhaseRunning}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "ns", Generation: 4}}
			c.Spec.Size, c.Spec.Version = 3, "3.6.8"
			if tt.upgrade != nil {
				c.Spec.Version = "3.8.0"
			}
			setStatus(c, outcome{report: tt.report, step: tt.step, upgradeErr: tt.upgrade}, DNSAddresses(c))
			for typ, reason := range map[string]string{
				conditions.ReadyCondition: tt.want.ready, v1beta2.AvailableCondition: tt.want.available,
				conditions.ProgressingCondition: tt.want.progressing, conditions.DegradedCondition: tt.want.degraded,
			} {
				got := conditions.Get(c, typ)
				if got == nil || got.Reason != reason || got.ObservedGeneration != 4 {
					t.Errorf("%s = %+v, want reason %s at generation 4", typ, got, reason)
				}
			}
			if conditions.IsTrue(c, conditions.ReadyCondition) != tt.want.readyTrue || c.Status.Phase != tt.want.phase {
				t.Errorf("ready %v phase %s; want %v %s", conditions.IsTrue(c, conditions.ReadyCondition), c.Status.Phase, tt.want.readyTrue, tt.want.phase)
			}
		})
	}
}

func TestSetStatusListsMembersWithIDsAndTheLeader(t *testing.T) {
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "ns"}}
	c.Spec.Size, c.Spec.Version = 3, "3.6.8"
	report := membership.Report{Observed: membership.Observed{Reachable: true, Members: healthy(3), Workloads: 3}, Leader: 0xa1, Version: "3.6.8"}
	setStatus(c, outcome{report: report, step: membership.Step{Action: membership.ActionNone}}, DNSAddresses(c))
	if c.Status.LeaderID != "a1" || c.Status.CurrentVersion != "3.6.8" || c.Status.Size != 3 || c.Status.ReadyMembers != 3 {
		t.Fatalf("status = %+v", c.Status)
	}
	if m := c.Status.Members[0]; m.Name != "e-0" || m.ID != "a0" || !m.Ready || m.Learner {
		t.Fatalf("first member = %+v", m)
	}
	// When nothing answers any more, members are no longer Ready and there is no leader.
	setStatus(c, outcome{report: membership.Report{Observed: membership.Observed{Workloads: 3}}, step: membership.Step{Action: membership.ActionWait}}, DNSAddresses(c))
	if c.Status.LeaderID != "" || c.Status.ReadyMembers != 0 || c.Status.Members[0].Ready || c.Status.Phase != v1beta2.PhaseFailed {
		t.Fatalf("status after losing contact = %+v", c.Status)
	}
}

func TestSetStatusKeepsEachMembersLastDefragmentation(t *testing.T) {
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "ns"}}
	c.Spec.Size, c.Spec.Version = 3, "3.6.8"
	earlier, later := metav1.NewTime(time.Unix(1000, 0)), metav1.NewTime(time.Unix(2000, 0))
	// A status read from a stale cache: e-0's time is gone, e-1's is older than its record.
	c.Status.Members = []v1beta2.MemberStatus{{Name: "e-1", ID: "a1", LastDefragmentTime: &earlier}, {Name: "e-2", ID: "a2", LastDefragmentTime: &earlier}}
	c.Status.Defragmentation = &v1beta2.DefragmentationStatus{Last: &v1beta2.DefragmentationRecord{Member: "e-1", Time: later}}
	report := membership.Report{Observed: membership.Observed{Reachable: true, Members: healthy(3), Workloads: 3}, Leader: 0xa1, Version: "3.6.8"}
	setStatus(c, outcome{report: report, step: membership.Step{Action: membership.ActionNone}}, DNSAddresses(c))
	got := map[string]*metav1.Time{}
	for _, m := range c.Status.Members {
		got[m.Name] = m.LastDefragmentTime
	}
	if got["e-0"] != nil || !got["e-1"].Equal(&later) || !got["e-2"].Equal(&earlier) {
		t.Fatalf("last defragmentations = %v; want e-0 none, e-1 the record's %v, e-2 its own %v", got, later, earlier)
	}
}

func TestSetStatusReportsTheLowestVersionMembersRun(t *testing.T) {
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "ns"}}
	c.Spec.Size, c.Spec.Version = 3, "3.6.8"
	// The engine reports the lowest version a member answering runs, not the leader's.
	report := membership.Report{Observed: membership.Observed{Reachable: true, Members: healthy(3), Workloads: 3}, Leader: 0xa0, Version: "3.5.21"}
	setStatus(c, outcome{report: report, step: membership.Step{Action: membership.ActionRestart}}, DNSAddresses(c))
	if c.Status.CurrentVersion != "3.5.21" || c.Status.TargetVersion != "3.6.8" {
		t.Fatalf("current %q target %q; want 3.5.21 and 3.6.8", c.Status.CurrentVersion, c.Status.TargetVersion)
	}
}

func TestSetStatusSaysWhichStepFailedAndKeepsWhatThePassSaw(t *testing.T) {
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "ns", Generation: 2}}
	c.Spec.Size, c.Spec.Version = 5, "3.6.8"
	report := membership.Report{Observed: membership.Observed{Reachable: true, Members: healthy(3), Workloads: 3}, Leader: 0xa1, Version: "3.6.8"}
	step := membership.Step{Action: membership.ActionAdd, Ordinal: 3, Reason: "scaling out to 5"}
	setStatus(c, outcome{report: report, step: step, stepErr: errors.New("etcdserver: too many learner members")}, DNSAddresses(c))
	degraded, progressing, ready := conditions.Get(c, conditions.DegradedCondition), conditions.Get(c, conditions.ProgressingCondition), conditions.Get(c, conditions.ReadyCondition)
	if degraded.Status != metav1.ConditionTrue || degraded.Reason != conditions.ReasonReconcileFailed ||
		degraded.Message != "Add of member 3 failed, and is retried: etcdserver: too many learner members" {
		t.Errorf("Degraded = %+v", degraded)
	}
	if progressing.Status != metav1.ConditionTrue || progressing.Reason != v1beta2.ReasonScalingOut || progressing.Message != "scaling out to 5" {
		t.Errorf("Progressing says the step under way: %+v", progressing)
	}
	if ready.Status != metav1.ConditionFalse || ready.Reason != conditions.ReasonReconcileFailed {
		t.Errorf("Ready = %+v", ready)
	}
	if c.Status.LeaderID != "a1" || c.Status.ReadyMembers != 3 || !conditions.IsTrue(c, v1beta2.AvailableCondition) {
		t.Errorf("what the pass saw is reported: %+v", c.Status)
	}
}

func TestPodDisruptionBudgetFollowsTheVotingMembers(t *testing.T) {
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "ns"}}
	c.Spec.Size = 5
	if got := podDisruptionBudget(c).Spec.MaxUnavailable.IntValue(); got != 2 {
		t.Fatalf("before any member is seen: maxUnavailable %d, want 2 (size 5)", got)
	}
	// Scaling out from 3 to 5: 3 voters and a learner. Quorum is 2 of 3: one may go, not two.
	c.Status.Members = []v1beta2.MemberStatus{{Name: "e-0"}, {Name: "e-1"}, {Name: "e-2"}, {Name: "e-3", Learner: true}}
	if got := podDisruptionBudget(c).Spec.MaxUnavailable.IntValue(); got != 1 {
		t.Fatalf("3 voters and a learner: maxUnavailable %d, want 1", got)
	}
}

func TestSetStatusSaysWhyCertificatesHoldTheCluster(t *testing.T) {
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	report := membership.Report{Observed: membership.Observed{Reachable: true, Members: healthy(3), Workloads: 3}, Leader: 0xa1, Version: "3.6.8"}
	newCluster := func() *v1beta2.EtcdCluster {
		c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "ns"}}
		c.Spec.Size, c.Spec.Version = 3, "3.6.8"
		c.Spec.TLS = &v1beta2.TLSPolicy{Static: &v1beta2.StaticTLS{}}
		return c
	}
	expiring := func(in time.Duration) tlsState {
		return tlsState{secret: "e-tls-1", status: &v1beta2.TLSStatus{Secret: "e-tls-1", NotAfter: ptr.To(metav1.NewTime(now.Add(in)))}}
	}

	c := newCluster()
	held := expiring(90 * 24 * time.Hour)
	held.err, held.reason = errors.New("the peer certificate does not cover e-3.e.ns.svc"), v1beta2.ReasonTLSRotationUnsafe
	setStatus(c, outcome{report: report, step: membership.Step{Action: actionHeld, Reason: "members keep theirs"}, tls: held, now: now}, DNSAddresses(c))
	if d := conditions.Get(c, conditions.DegradedCondition); d.Reason != v1beta2.ReasonTLSRotationUnsafe || d.Message != held.err.Error() {
		t.Errorf("Degraded = %+v", d)
	}
	if p := conditions.Get(c, conditions.ProgressingCondition); p.Status != metav1.ConditionFalse || p.Reason != v1beta2.ReasonTLSRotationUnsafe {
		t.Errorf("Progressing = %+v", p)
	}
	if !conditions.IsTrue(c, v1beta2.AvailableCondition) || c.Status.TLS.Secret != "e-tls-1" {
		t.Errorf("the cluster still serves on the certificates it has: %+v", c.Status)
	}

	c = newCluster()
	c.Spec.TLS = &v1beta2.TLSPolicy{CertManager: &v1beta2.CertManagerTLS{IssuerRef: v1beta2.IssuerReference{Name: "ca"}}}
	issuing := tlsState{err: fmt.Errorf("%w [e-peer-tls] from Issuer ca", errIssuing), reason: v1beta2.ReasonIssuingCertificates}
	setStatus(c, outcome{report: membership.Report{}, step: membership.Step{Action: actionHeld, Reason: issuing.err.Error()}, tls: issuing, now: now}, DNSAddresses(c))
	if p := conditions.Get(c, conditions.ProgressingCondition); p.Status != metav1.ConditionTrue || p.Reason != v1beta2.ReasonIssuingCertificates {
		t.Errorf("a new cluster waiting for cert-manager is progressing: Progressing = %+v", p)
	}
	if d := conditions.Get(c, conditions.DegradedCondition); d.Status != metav1.ConditionFalse {
		t.Errorf("a new cluster waiting for cert-manager is not Degraded: %+v", d)
	}

	for in, want := range map[time.Duration]metav1.ConditionStatus{29 * 24 * time.Hour: metav1.ConditionTrue, 31 * 24 * time.Hour: metav1.ConditionFalse} {
		c := newCluster()
		setStatus(c, outcome{report: report, step: membership.Step{Action: membership.ActionNone}, tls: expiring(in), now: now}, DNSAddresses(c))
		if e := conditions.Get(c, v1beta2.CertificateExpiringCondition); e == nil || e.Status != want {
			t.Errorf("static certificates expiring in %s: CertificateExpiring = %+v, want %s", in, e, want)
		}
		if !conditions.IsTrue(c, conditions.ReadyCondition) || conditions.IsTrue(c, conditions.DegradedCondition) {
			t.Errorf("a cluster whose certificates are still valid serves: Ready and not Degraded, %+v", c.Status.Conditions)
		}
		c.Spec.TLS = &v1beta2.TLSPolicy{OperatorManaged: &v1beta2.OperatorManagedTLS{}}
		setStatus(c, outcome{report: report, step: membership.Step{Action: membership.ActionNone}, tls: expiring(in), now: now}, DNSAddresses(c))
		if e := conditions.Get(c, v1beta2.CertificateExpiringCondition); e.Status != metav1.ConditionFalse || e.Reason != v1beta2.ReasonRenewedByOperator {
			t.Errorf("the operator renews its own certificates: CertificateExpiring = %+v", e)
		}
	}
	c.Spec.TLS = nil
	setStatus(c, outcome{report: report, step: membership.Step{Action: membership.ActionNone}, now: now}, DNSAddresses(c))
	if conditions.Get(c, v1beta2.CertificateExpiringCondition) != nil {
		t.Error("no CertificateExpiring without TLS")
	}
}

// A cluster none of whose members answers is asked again less often the longer none has:
// a thousand such clusters asked every 15 s kept every worker busy, and the passes that
// would start their members waited behind them.
func TestAClusterNoMemberAnswersIsAskedLessOftenTheLongerItDoesNot(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	degradedFor := func(reason string, d time.Duration) *v1beta2.EtcdCluster {
		c := &v1beta2.EtcdCluster{}
		c.Status.Conditions = []metav1.Condition{{Type: conditions.DegradedCondition, Status: metav1.ConditionTrue, Reason: reason,
			LastTransitionTime: metav1.NewTime(now.Add(-d))}}
		return c
	}
	unreachable := membership.Report{}
	tests := []struct {
		name    string
		cluster *v1beta2.EtcdCluster
		report  membership.Report
		want    time.Duration
	}{
		{"no status yet", &v1beta2.EtcdCluster{}, unreachable, 15 * time.Second},
		{"unreachable for 10 s", degradedFor(v1beta2.ReasonMembersUnreachable, 10*time.Second), unreachable, 15 * time.Second},
		{"unreachable for a minute", degradedFor(v1beta2.ReasonMembersUnreachable, time.Minute), unreachable, 30 * time.Second},
		{"unreachable for an hour", degradedFor(v1beta2.ReasonMembersUnreachable, time.Hour), unreachable, 2 * time.Minute},
		{"degraded for another reason", degradedFor(v1beta2.ReasonTLSInvalid, time.Hour), unreachable, 15 * time.Second},
		{"answering and stable", degradedFor(v1beta2.ReasonMembersUnreachable, time.Hour),
			membership.Report{Observed: membership.Observed{Reachable: true}}, 30 * time.Second},
	}
	for _, tt := range tests {
		step := membership.Step{Action: membership.ActionNone}
		if got := requeueAfter(tt.cluster, step, tt.report, now); got != tt.want {
			t.Errorf("%s: asked again after %s, want %s", tt.name, got, tt.want)
		}
	}
}
