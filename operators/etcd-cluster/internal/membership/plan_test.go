package membership

import "testing"

// voters returns n healthy, started voting members with ordinals 0..n-1.
func voters(n int) []Member {
	ms := make([]Member, n)
	for i := range ms {
		ms[i] = Member{Ordinal: i, ID: uint64(i + 1), Started: true, Healthy: true, Index: 100}
	}
	return ms
}

func TestPlan(t *testing.T) {
	sick := func(ms []Member, ordinals ...int) []Member {
		for _, o := range ordinals {
			ms[o].Healthy = false
		}
		return ms
	}
	learner := func(ms []Member, o int, started, healthy bool, index uint64) []Member {
		return append(ms, Member{Ordinal: o, ID: 99, Learner: true, Started: started, Healthy: healthy, Index: index})
	}
	lost := func(ms []Member, o int) []Member { ms[o].Lost, ms[o].Healthy = true, false; return ms }
	tests := []struct {
		name    string
		desired int
		obs     Observed
		want    Action
		ordinal int
	}{
		{"nothing yet: bootstrap one member", 3, Observed{}, ActionBootstrap, 0},
		{"workloads but no answer: wait", 3, Observed{Workloads: 2}, ActionWait, 0},
		{"grow one at a time", 3, Observed{Reachable: true, Workloads: 1, Members: voters(1), LeaderIndex: 100}, ActionAdd, 1},
		{"start an added learner", 3, Observed{Reachable: true, Workloads: 1, Members: learner(voters(1), 1, false, false, 0)}, ActionStart, 1},
		{"wait for a learner to start", 3, Observed{Reachable: true, Workloads: 2, Members: learner(voters(1), 1, false, false, 0)}, ActionWait, 1},
		{"wait for a learner to catch up", 3, Observed{Reachable: true, Workloads: 2, Members: learner(voters(1), 1, true, true, 10), LeaderIndex: 100}, ActionWait, 1},
		{"promote a caught-up learner", 3, Observed{Reachable: true, Workloads: 2, Members: learner(voters(1), 1, true, true, 95), LeaderIndex: 100}, ActionPromote, 1},
		{"no add while a member is unhealthy", 5, Observed{Reachable: true, Workloads: 3, Members: sick(voters(3), 2)}, ActionWait, 0},
		{"shrink from the highest ordinal", 3, Observed{Reachable: true, Workloads: 5, Members: voters(5)}, ActionRemove, 4},
		{"stable", 3, Observed{Reachable: true, Workloads: 3, Members: voters(3)}, ActionNone, 0},
		{"no quorum: wait", 3, Observed{Reachable: true, Workloads: 3, Members: sick(voters(3), 0, 1)}, ActionWait, 0},
		{"refuse a removal that loses quorum", 2, Observed{Reachable: true, Workloads: 3, Members: sick(voters(3), 0)}, ActionRefuse, 2},
		{"removing an unhealthy last member is safe", 2, Observed{Reachable: true, Workloads: 3, Members: sick(voters(3), 2)}, ActionRemove, 2},
		{"replace a lost member", 3, Observed{Reachable: true, Workloads: 3, Members: lost(voters(3), 1)}, ActionReplace, 1},
		{"stop a workload without a member", 3, Observed{Reachable: true, Workloads: 4, Members: voters(3)}, ActionRemove, 3},
		{"re-add a replaced member in its gap", 3, Observed{Reachable: true, Workloads: 3, Members: []Member{voters(3)[0], voters(3)[2]}}, ActionAdd, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Plan(tt.desired, tt.obs)
			if got.Action != tt.want || got.Ordinal != tt.ordinal {
				t.Fatalf("Plan = %s ordinal %d (%s); want %s ordinal %d", got.Action, got.Ordinal, got.Reason, tt.want, tt.ordinal)
			}
		})
	}
}

func TestQuorum(t *testing.T) {
	for n, want := range map[int]int{1: 1, 2: 2, 3: 2, 4: 3, 5: 3, 9: 5} {
		if got := Quorum(n); got != want {
			t.Errorf("Quorum(%d) = %d, want %d", n, got, want)
		}
	}
}
