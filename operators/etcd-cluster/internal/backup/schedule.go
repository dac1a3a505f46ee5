package backup

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
)

// DefaultTimeout bounds a backup when backupPolicy.timeoutInSecond is unset.
const DefaultTimeout = 5 * time.Minute

// Timeout bounds one backup of p.
func Timeout(p *v1beta2.BackupPolicy) time.Duration {
	if p == nil || p.TimeoutInSecond == 0 {
		return DefaultTimeout
	}
	return time.Duration(p.TimeoutInSecond) * time.Second
}

// Periodic says whether p takes backups again and again (else once).
func Periodic(p *v1beta2.BackupPolicy) bool {
	return p != nil && (p.BackupIntervalInSecond > 0 || p.Schedule != "")
}

// NextAfter is when the periodic backup after the one started at last is due: an interval
// after it, or the schedule's next time after it (in UTC).
func NextAfter(p *v1beta2.BackupPolicy, last time.Time) (time.Time, error) {
	if p.Schedule == "" {
		return last.Add(time.Duration(p.BackupIntervalInSecond) * time.Second), nil
	}
	s, err := cron.ParseStandard(p.Schedule)
	if err != nil {
		return time.Time{}, &Error{Reason: v1beta2.ReasonScheduleInvalid, Err: fmt.Errorf("schedule %q: %w", p.Schedule, err)}
	}
	return s.Next(last.UTC()), nil
}

// intervalFrom is where Interval reads a schedule's firings from: a fixed time, so that a
// schedule's interval never changes (2001-01-01 was a Monday).
var intervalFrom = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

// intervalFirings bounds the firings Interval reads: a week of a schedule that fires every
// minute, years of most.
const intervalFirings = 10000

// Interval is the longest p waits between two backups, and false for a one-shot backup or
// a schedule that does not parse: the interval, or the longest time between two consecutive
// firings of the schedule over the year after its first from intervalFrom (one day for
// "0 3 * * *", the weekend for "0 3 * * 1-5").
func Interval(p *v1beta2.BackupPolicy) (time.Duration, bool) {
	if !Periodic(p) {
		return 0, false
	}
	if p.Schedule == "" {
		return time.Duration(p.BackupIntervalInSecond) * time.Second, true
	}
	s, err := cron.ParseStandard(p.Schedule)
	if err != nil {
		return 0, false
	}
	var longest time.Duration
	first := s.Next(intervalFrom)
	end := first.AddDate(1, 0, 0)
	for at, n := first, 0; !at.IsZero() && at.Before(end) && n < intervalFirings; n++ {
		next := s.Next(at) // zero when none comes within five years
		if !next.IsZero() {
			longest = max(longest, next.Sub(at))
		}
		at = next
	}
	return longest, longest > 0
}

// Retry is how long to wait after consecutive failures before trying again: 10s, doubling,
// at most 5 minutes.
func Retry(consecutive int32) time.Duration {
	const first, most = 10 * time.Second, 5 * time.Minute
	d := first
	for i := int32(1); i < consecutive && d < most; i++ {
		d *= 2
	}
	return min(d, most)
}

// Due is when b's next backup is due, and false when none is (a one-shot backup that
// succeeded): at once (the zero time) for the first, then as the policy says; after a
// failure, when Retry says, unless the schedule comes sooner.
func Due(b *v1beta2.EtcdBackup) (time.Time, bool, error) {
	st, p := &b.Status, b.Spec.BackupPolicy
	var due time.Time
	switch {
	case st.LastBackup == nil:
	case !Periodic(p):
		return time.Time{}, false, nil
	default:
		next, err := NextAfter(p, st.LastBackup.StartTime.Time)
		if err != nil {
			return time.Time{}, false, err
		}
		due = next
	}
	if f := st.LastFailure; f != nil {
		retry := f.Time.Add(Retry(f.Consecutive))
		if due.IsZero() || retry.Before(due) {
			due = retry
		}
	}
	return due, true, nil
}
