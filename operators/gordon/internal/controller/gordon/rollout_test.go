package gordon

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1 "github.com/quintet-operators/quintet/operators/gordon/api/v1"
)

func TestRolloutBoundsResolveLikeADeployment(t *testing.T) {
	tests := []struct {
		replicas               int32
		maxSurge, maxUnavail   *intstr.IntOrString
		wantSurge, wantUnavail int
	}{
		{10, nil, nil, 3, 2}, // 25% of 10: surge rounds up, unavailable down
		{3, nil, nil, 1, 0},
		{1, nil, nil, 1, 0},
		{4, ptr.To(intstr.FromInt32(0)), ptr.To(intstr.FromString("100%")), 0, 4},
		{4, ptr.To(intstr.FromInt32(0)), ptr.To(intstr.FromInt32(0)), 0, 1}, // never stuck
		{2, ptr.To(intstr.FromInt32(5)), ptr.To(intstr.FromInt32(5)), 5, 2}, // unavailable at most replicas
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d replicas %v %v", tt.replicas, tt.maxSurge, tt.maxUnavail), func(t *testing.T) {
			g := &v1.Gordon{}
			g.Spec.Gordon.Replicas = ptr.To(tt.replicas)
			g.Spec.Gordon.RollingUpdate = &v1.RollingUpdate{MaxSurge: tt.maxSurge, MaxUnavailable: tt.maxUnavail}
			surge, unavail := rolloutBounds(g)
			if surge != tt.wantSurge || unavail != tt.wantUnavail {
				t.Errorf("surge, unavailable = %d, %d; want %d, %d", surge, unavail, tt.wantSurge, tt.wantUnavail)
			}
		})
	}
}

// rolloutSim plays the pods of one Gordon through planPods: created pods start unready and
// become Ready one pass later (unless the template crashes), deleted pods go at once.
type rolloutSim struct {
	t                 *testing.T
	desired           int
	surge, unavail    int
	current, outdated []corev1.Pod
	next              int
	crashing          bool // pods of the current template never become Ready
}

func (s *rolloutSim) pod(ready bool) corev1.Pod {
	s.next++
	return testPod(fmt.Sprintf("p%03d", s.next), 0, "n1", corev1.PodRunning, ready)
}

// pass runs one plan and checks the bounds after it; it reports whether anything changed.
func (s *rolloutSim) pass() bool {
	for i := range s.current {
		if !s.crashing {
			s.current[i].Status.Conditions[0].Status = corev1.ConditionTrue
		}
	}
	plan := planPods(s.desired, s.surge, s.unavail, s.current, s.outdated)
	gone := map[string]bool{}
	for _, p := range plan.delete {
		gone[p.Name] = true
	}
	keep := func(pods []corev1.Pod) []corev1.Pod {
		var out []corev1.Pod
		for _, p := range pods {
			if !gone[p.Name] {
				out = append(out, p)
			}
		}
		return out
	}
	s.current, s.outdated = keep(s.current), keep(s.outdated)
	for range plan.create {
		s.current = append(s.current, s.pod(false))
	}
	if total := len(s.current) + len(s.outdated); total > s.desired+s.surge {
		s.t.Fatalf("%d pods exist, more than %d replicas + %d surge", total, s.desired, s.surge)
	}
	if ready := countReady(s.current) + countReady(s.outdated); ready < s.desired-s.unavail {
		s.t.Fatalf("%d pods Ready, fewer than %d replicas - %d unavailable", ready, s.desired, s.unavail)
	}
	return plan.create > 0 || len(plan.delete) > 0
}

func TestPlanPodsRollsWithinMaxSurgeAndMaxUnavailable(t *testing.T) {
	for _, tt := range []struct{ desired, surge, unavail int }{
		{10, 3, 2}, {3, 1, 0}, {1, 1, 0}, {5, 0, 1}, {4, 0, 4}, {7, 7, 0},
	} {
		t.Run(fmt.Sprintf("%d replicas surge %d unavailable %d", tt.desired, tt.surge, tt.unavail), func(t *testing.T) {
			s := &rolloutSim{t: t, desired: tt.desired, surge: tt.surge, unavail: tt.unavail}
			for range tt.desired {
				s.outdated = append(s.outdated, s.pod(true))
			}
			passes := 0
			for s.pass() {
				if passes++; passes > 100 {
					t.Fatal("the rollout does not finish")
				}
			}
			if len(s.outdated) != 0 || len(s.current) != tt.desired || countReady(s.current) != tt.desired {
				t.Fatalf("after %d passes: %d current (%d Ready), %d outdated", passes, len(s.current), countReady(s.current), len(s.outdated))
			}
		})
	}
}

func TestPlanPodsHoldsARolloutWhoseNewPodsNeverBecomeReady(t *testing.T) {
	s := &rolloutSim{t: t, desired: 4, surge: 1, unavail: 1, crashing: true}
	for range 4 {
		s.outdated = append(s.outdated, s.pod(true))
	}
	for range 20 {
		s.pass()
	}
	// maxSurge+maxUnavailable new pods at most, and the old pods still serving.
	if len(s.current) != 2 || len(s.outdated) != 3 || countReady(s.outdated) != 3 {
		t.Fatalf("%d current, %d outdated (%d Ready): a broken template must not eat the old pods",
			len(s.current), len(s.outdated), countReady(s.outdated))
	}
}

func TestPlanPods(t *testing.T) {
	ready := func(name string) corev1.Pod { return testPod(name, 0, "n1", corev1.PodRunning, true) }
	unready := func(name string) corev1.Pod { return testPod(name, 0, "n1", corev1.PodRunning, false) }
	pods := func(p ...corev1.Pod) []corev1.Pod { return p }
	tests := []struct {
		name                    string
		desired, surge, unavail int
		current, outdated       []corev1.Pod
		wantCreate              int
		wantDelete              []string
	}{
		{"scale up", 3, 1, 0, pods(ready("a")), nil, 2, nil},
		{"scale down", 1, 1, 0, pods(ready("a"), unready("b")), nil, 0, []string{"b"}},
		{"rollout starts with the surge", 3, 1, 0, nil, pods(ready("a"), ready("b"), ready("c")), 1, nil},
		{"unready outdated pods go first, then Ready ones within maxUnavailable", 3, 1, 1, pods(ready("n")), pods(ready("a"), unready("b"), ready("c")), 0, []string{"a", "b"}},
		{"scaled down during a rollout: outdated pods go first", 1, 1, 0, pods(ready("n")), pods(ready("a"), ready("b")), 0, []string{"a"}},
		{"reverted template: the broken pods are outdated and unready", 2, 1, 0,
			pods(ready("a"), ready("b")), pods(unready("x")), 0, []string{"x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := planPods(tt.desired, tt.surge, tt.unavail, tt.current, tt.outdated)
			if plan.create != tt.wantCreate || fmt.Sprint(sortedNames(plan.delete)) != fmt.Sprint(tt.wantDelete) {
				t.Errorf("create %d, delete %v; want %d, %v", plan.create, names(plan.delete), tt.wantCreate, tt.wantDelete)
			}
		})
	}
}

func sortedNames(pods []corev1.Pod) []string {
	out := names(pods)
	if len(out) == 0 {
		return nil
	}
	slices.Sort(out)
	return out
}
