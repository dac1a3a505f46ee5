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
