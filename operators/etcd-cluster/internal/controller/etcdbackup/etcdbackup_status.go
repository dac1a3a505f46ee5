package etcdbackup

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/shared/conditions"
)

// The status of an EtcdBackup follows from its last success and its last failure. Ready is
// True while the last backup succeeded, and stays True while the next one runs (Progressing):
// a periodic backup does not flap Ready at each run. Degraded is True from a failure until
// a backup succeeds again.

// setBackingUp marks a backup as under way.
func setBackingUp(b *v1beta2.EtcdBackup) {
	setConditions(b, true)
}

// setWaitingForCluster marks a first backup as waiting for its cluster.
func setWaitingForCluster(b *v1beta2.EtcdBackup) {
	b.Status.ObservedGeneration = b.Generation
	message := fmt.Sprintf("Waiting for EtcdCluster %s to become Available", b.Spec.ClusterName)
	conditions.Set(b, conditions.ProgressingCondition, metav1.ConditionTrue, v1beta2.ReasonWaitingForCluster, message)
	conditions.Set(b, conditions.DegradedCondition, metav1.ConditionFalse, conditions.ReasonAsExpected, "No backup has failed")
	conditions.Set(b, conditions.ReadyCondition, metav1.ConditionFalse, v1beta2.ReasonWaitingForCluster, message)
}

// setSucceeded records a backup taken.
func setSucceeded(b *v1beta2.EtcdBackup, r v1beta2.BackupRecord) {
	st := &b.Status
	st.LastBackup, st.LastFailure = &r, nil
	st.Succeeded, st.Reason = true, ""
	st.EtcdVersion, st.EtcdRevision = r.EtcdVersion, r.EtcdRevision
	st.LastSuccessDate = &r.StartTime
	setConditions(b, false)
}

// setFailed records a backup that failed, or a policy that cannot be followed.
func setFailed(b *v1beta2.EtcdBackup, err error, now time.Time) {
	st := &b.Status
	consecutive := int32(1)
	if st.LastFailure != nil {
		consecutive = st.LastFailure.Consecutive + 1
	}
	st.LastFailure = &v1beta2.BackupFailure{Time: metav1.NewTime(now), Reason: backup.ReasonOf(err), Message: err.Error(), Consecutive: consecutive}
	st.Succeeded, st.Reason = false, err.Error()
	setConditions(b, false)
}

// setWaiting records when the next backup is due (nil: none is).
func setWaiting(b *v1beta2.EtcdBackup, next *time.Time) {
	b.Status.NextBackupTime = nil
	if next != nil {
		b.Status.NextBackupTime = &metav1.Time{Time: next.Truncate(time.Second)}
	}
	setConditions(b, false)
}

func setConditions(b *v1beta2.EtcdBackup, backingUp bool) {
	st := &b.Status
	st.ObservedGeneration = b.Generation
	switch v := st.Verifying; {
	case v != nil:
		conditions.Set(b, conditions.ProgressingCondition, metav1.ConditionTrue, v1beta2.ReasonVerifying,
			fmt.Sprintf("Verifying backup %s (revision %d of %s): a Job restores it into a scratch etcd", v.Path, v.EtcdRevision, v.Member))
	case backingUp:
		conditions.Set(b, conditions.ProgressingCondition, metav1.ConditionTrue, v1beta2.ReasonBackingUp, "Taking a backup of "+source(b))
	default:
		conditions.Set(b, conditions.ProgressingCondition, metav1.ConditionFalse, conditions.ReasonStable, "No backup is running")
	}
	switch f, last := st.LastFailure, st.LastBackup; {
	case f != nil:
		message := fmt.Sprintf("%s (%d in a row; retried after %s)", f.Message, f.Consecutive, backup.Retry(f.Consecutive))
		conditions.Set(b, conditions.DegradedCondition, metav1.ConditionTrue, f.Reason, message)
		conditions.Set(b, conditions.ReadyCondition, metav1.ConditionFalse, f.Reason, message)
	case last != nil:
		conditions.Set(b, conditions.DegradedCondition, metav1.ConditionFalse, conditions.ReasonAsExpected, "The last backup succeeded")
		message := fmt.Sprintf("Revision %d of %s is in %s (%d bytes, taken %s)",
			last.EtcdRevision, last.Member, last.Path, last.Size, last.StartTime.UTC().Format(time.RFC3339))
		if last.Verification != nil {
			message += "; verified: " + last.Verification.Message
		}
		conditions.Set(b, conditions.ReadyCondition, metav1.ConditionTrue, v1beta2.ReasonBackupSucceeded, message)
	default:
		conditions.Set(b, conditions.DegradedCondition, metav1.ConditionFalse, conditions.ReasonAsExpected, "No backup has failed")
		conditions.Set(b, conditions.ReadyCondition, metav1.ConditionFalse, v1beta2.ReasonBackupPending, "No backup has been taken yet")
	}
}

// source names what b backs up.
func source(b *v1beta2.EtcdBackup) string {
	if b.Spec.ClusterName != "" {
		return "EtcdCluster " + b.Spec.ClusterName
	}
	return fmt.Sprintf("%v", b.Spec.EtcdEndpoints)
}
