package etcdrestore

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/shared/conditions"
)

// setStatus reports er's restore from its cluster c (nil: gone). It is pure. Ready is True
// once the cluster serves the snapshot's data, and stays so: a restore happens once.
func setStatus(er *v1beta2.EtcdRestore, c *v1beta2.EtcdCluster) {
	er.Status.ObservedGeneration = er.Generation
	if er.Status.Succeeded {
		return
	}
	var restored *metav1.Condition
	if c != nil {
		restored = conditions.Get(c, v1beta2.RestoredCondition)
	}
	switch {
	case c == nil:
		setFailed(er, v1beta2.ReasonClusterDeleted, fmt.Sprintf("EtcdCluster %s, which this restore made, was deleted before it served "+
			"the snapshot's data; a restore makes its cluster once: make another EtcdRestore", er.Spec.EtcdCluster.Name))
	case c.UID != er.Status.ClusterUID:
		setFailed(er, v1beta2.ReasonClusterExists, fmt.Sprintf("EtcdCluster %s exists and was not made by this restore: a restore never "+
			"overwrites a cluster; name another, or delete that one: the restore makes its cluster once the name is free", c.Name))
	case restored != nil && restored.Status == metav1.ConditionTrue:
		er.Status.Succeeded, er.Status.Reason = true, ""
		conditions.Set(er, conditions.ProgressingCondition, metav1.ConditionFalse, v1beta2.ReasonRestored, restored.Message)
		conditions.Set(er, conditions.DegradedCondition, metav1.ConditionFalse, conditions.ReasonAsExpected, "the restore succeeded")
		conditions.SetSummary(er, metav1.ConditionTrue, v1beta2.ReasonRestored, restored.Message)
	case restored != nil && restored.Reason != v1beta2.ReasonRestoring:
		setFailed(er, restored.Reason, fmt.Sprintf("EtcdCluster %s: %s", c.Name, restored.Message))
	default:
		message := fmt.Sprintf("EtcdCluster %s's first member restores the snapshot and starts", c.Name)
		er.Status.Reason = ""
		conditions.Set(er, conditions.ProgressingCondition, metav1.ConditionTrue, v1beta2.ReasonRestoring, message)
		conditions.Set(er, conditions.DegradedCondition, metav1.ConditionFalse, conditions.ReasonAsExpected, "nothing failed")
		conditions.SetSummary(er, metav1.ConditionFalse, v1beta2.ReasonRestoring, message)
	}
}

func setFailed(er *v1beta2.EtcdRestore, reason, message string) {
	er.Status.Reason = message
	conditions.Set(er, conditions.ProgressingCondition, metav1.ConditionFalse, reason, message)
	conditions.Set(er, conditions.DegradedCondition, metav1.ConditionTrue, reason, message)
	conditions.SetSummary(er, metav1.ConditionFalse, reason, message)
}
