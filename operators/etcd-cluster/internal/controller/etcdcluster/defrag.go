package etcdcluster

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/robfig/cron/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/membership"
)

// defragTimeout bounds one member's defragmentation (etcd rewrites the whole database).
const defragTimeout = 5 * time.Minute

// defragCandidate is the member a pass defragments, and why.
type defragCandidate struct {
	member membership.Member
	reason string // ReasonScheduled or ReasonFreePages
}

// nextDefragmentation picks the member to defragment, if any: one whose scheduled run is
// due (it was not defragmented since run), or whose database is past freePercent. Followers
// go first, the most free pages first; the leader last. A pass in which a member did not
// answer, is a learner, or no leader answered defragments nothing: the order needs every
// member's state (a follower whose status timed out would otherwise go after the leader).
// It is pure.
func nextDefragmentation(p *v1beta2.DefragmentationPolicy, members []membership.Member, leader uint64,
	last map[uint64]time.Time, run *time.Time) (defragCandidate, bool) {
	if leader == 0 || slices.ContainsFunc(members, func(m membership.Member) bool { return !m.Healthy || m.Learner }) {
		return defragCandidate{}, false
	}
	var candidates []defragCandidate
	for _, m := range members {
		switch {
		case run != nil && last[m.ID].Before(*run):
			candidates = append(candidates, defragCandidate{member: m, reason: v1beta2.ReasonScheduled})
		case pastFreePercent(p, m):
			candidates = append(candidates, defragCandidate{member: m, reason: v1beta2.ReasonFreePages})
		}
	}
	if len(candidates) == 0 {
		return defragCandidate{}, false
	}
	slices.SortStableFunc(candidates, func(a, b defragCandidate) int {
		if (a.member.ID == leader) != (b.member.ID == leader) {
			return boolInt(a.member.ID == leader) - boolInt(b.member.ID == leader)
		}
		return int(free(b.member) - free(a.member))
	})
	return candidates[0], true
}

func free(m membership.Member) int64 { return m.DBSize - m.DBSizeInUse }

func pastFreePercent(p *v1beta2.DefragmentationPolicy, m membership.Member) bool {
	if p.FreePercent == 0 || m.DBSize == 0 || (p.MinDBSize != nil && m.DBSize < p.MinDBSize.Value()) {
		return false
	}
	return free(m)*100 >= int64(p.FreePercent)*m.DBSize
}

// scheduledRun advances the schedule in st at now: the run under way (nil: none), and when
// the next is due. A run starts at the first pass at or after its time. It is pure.
func scheduledRun(p *v1beta2.DefragmentationPolicy, st *v1beta2.DefragmentationStatus, now time.Time) (*time.Time, error) {
	if p.Schedule == "" {
		st.ScheduledRun, st.NextScheduleTime = nil, nil
		return nil, nil
	}
	schedule, err := cron.ParseStandard(p.Schedule)
	if err != nil {
		return nil, fmt.Errorf("defragmentation.schedule %q: %w", p.Schedule, err)
	}
	if st.ScheduledRun == nil && st.NextScheduleTime != nil && !now.Before(st.NextScheduleTime.Time) {
		st.ScheduledRun = st.NextScheduleTime
	}
	if st.ScheduledRun != nil || st.NextScheduleTime == nil {
		st.NextScheduleTime = &metav1.Time{Time: schedule.Next(now)}
	}
	if st.ScheduledRun == nil {
		return nil, nil
	}
	return &st.ScheduledRun.Time, nil
}

// reconcileDefragmentation defragments at most one member of a Ready cluster, records it,
// and says when to look again: soon while members wait, at the next scheduled run otherwise.
func (r *Reconciler) reconcileDefragmentation(ctx context.Context, c *v1beta2.EtcdCluster, engine *membership.Engine,
	report membership.Report, now time.Time) (time.Duration, error) {
	p := c.Spec.Defragmentation
	if p == nil {
		c.Status.Defragmentation = nil
		return requeueStable, nil
	}
	st := c.Status.Defragmentation
	if st == nil {
		st = &v1beta2.DefragmentationStatus{}
		c.Status.Defragmentation = st
	}
	run, err := scheduledRun(p, st, now)
	if err != nil {
		return requeueStable, err
	}
	last := lastDefragmentations(c)
	next, ok := nextDefragmentation(p, report.Observed.Members, report.Leader, last, run)
	if !ok {
		st.ScheduledRun = nil
		return untilSchedule(st, now), nil
	}
	name := r.addresses(c).Name(next.member.Ordinal)
	ctrl.LoggerFrom(ctx).Info("Defragmenting member", "member", name, "reason", next.reason, "dbSize", next.member.DBSize, "dbSizeInUse", next.member.DBSizeInUse)
	after, err := engine.Defragment(ctx, report.Observed, next.member.Ordinal, defragTimeout)
	took := time.Since(now)
	if err != nil {
		r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, v1beta2.ReasonDefragmentFailed, "Defragment", "Member %s: %v", name, err)
		return 0, err
	}
	st.Last = &v1beta2.DefragmentationRecord{Member: name, Time: metav1.NewTime(now), Duration: metav1.Duration{Duration: took},
		DBSizeBefore: next.member.DBSize, DBSizeAfter: after.DBSize, Reason: next.reason, Leader: next.member.ID == report.Leader}
	for i := range c.Status.Members {
		if c.Status.Members[i].Name == name {
			c.Status.Members[i].LastDefragmentTime = &st.Last.Time
			c.Status.Members[i].DBSize, c.Status.Members[i].DBSizeInUse = after.DBSize, after.DBSizeInUse
		}
	}
	role := "follower"
	if st.Last.Leader {
		role = "leader"
	}
	r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, v1beta2.ReasonDefragmented, "Defragment",
		"Member %s (%s, %s): database %s → %s, freed %s in %s", name, role, next.reason, mib(next.member.DBSize), mib(after.DBSize),
		mib(next.member.DBSize-after.DBSize), took.Round(time.Millisecond))
	return requeueChanging, nil
}

// lastDefragmentations are the members' last defragmentations, by ID, from the status.
func lastDefragmentations(c *v1beta2.EtcdCluster) map[uint64]time.Time {
	last := map[uint64]time.Time{}
	for _, m := range c.Status.Members {
		if id, err := strconv.ParseUint(m.ID, 16, 64); err == nil && m.LastDefragmentTime != nil {
			last[id] = m.LastDefragmentTime.Time
		}
	}
	return last
}

// untilSchedule is how long until the next scheduled run, at most requeueStable.
func untilSchedule(st *v1beta2.DefragmentationStatus, now time.Time) time.Duration {
	if st.NextScheduleTime == nil {
		return requeueStable
	}
	return min(requeueStable, max(st.NextScheduleTime.Sub(now), time.Second))
}

func mib(bytes int64) string { return fmt.Sprintf("%.1f MiB", float64(bytes)/(1<<20)) }
