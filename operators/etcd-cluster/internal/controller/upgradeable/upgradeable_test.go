package upgradeable

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/shared/conditions"
)

func cluster(name string, progressing metav1.ConditionStatus, reason string) v1beta2.EtcdCluster {
	c := v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	c.Status.Conditions = []metav1.Condition{{Type: conditions.ProgressingCondition, Status: progressing, Reason: reason}}
	return c
}

func TestClustersChangingMembersOrVersionsHoldUpgrades(t *testing.T) {
	clusters := []v1beta2.EtcdCluster{
		cluster("stable", metav1.ConditionFalse, conditions.ReasonStable),
		cluster("unreachable", metav1.ConditionFalse, v1beta2.ReasonMembersUnreachable),
		cluster("upgrading", metav1.ConditionTrue, v1beta2.ReasonUpgrading),
		cluster("adding", metav1.ConditionTrue, v1beta2.ReasonScalingOut),
		cluster("removing", metav1.ConditionTrue, v1beta2.ReasonScalingIn),
		cluster("promoting", metav1.ConditionTrue, v1beta2.ReasonPromotingLearner),
		cluster("replacing", metav1.ConditionTrue, v1beta2.ReasonReplacingMember),
		cluster("restarting", metav1.ConditionTrue, v1beta2.ReasonRestarting),
		cluster("recovering", metav1.ConditionTrue, v1beta2.ReasonRecovering),
		cluster("paused", metav1.ConditionFalse, v1beta2.ReasonPaused),
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "new"}}, // no status yet
	}
	got := Holds(clusters)
	want := []string{"ns/adding: ScalingOut", "ns/promoting: PromotingLearner", "ns/recovering: Recovering", "ns/removing: ScalingIn",
		"ns/replacing: ReplacingMember", "ns/restarting: Restarting", "ns/upgrading: Upgrading"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("holds %q, want %q", got, want)
	}
}

func TestUpgradeableIsFalseWhileAnythingHolds(t *testing.T) {
	if c := Condition(nil); c.Status != metav1.ConditionTrue || c.Reason != v1beta2.ReasonNoMembershipChange || c.Type != "Upgradeable" {
		t.Errorf("no holds: %+v", c)
	}
	c := Condition([]string{"ns/a: Upgrading"})
	if c.Status != metav1.ConditionFalse || c.Reason != v1beta2.ReasonMembershipChanging || !strings.Contains(c.Message, "ns/a: Upgrading") {
		t.Errorf("one hold: %+v", c)
	}
	c = Condition([]string{"a", "b", "c", "d", "e"})
	if !strings.HasSuffix(c.Message, "a, b, c and 2 more") {
		t.Errorf("message %q", c.Message)
	}
}
