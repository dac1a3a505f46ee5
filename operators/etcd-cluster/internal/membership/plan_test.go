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

// running returns n running workloads holding the data of voters(n).
func running(n int) []Workload {
	ws := make([]Workload, n)
	for i := range ws {
		ws[i] = Workload{Ordinal: i, Exists: true, DataOf: uint64(i + 1)}
	}
	return ws
}

// with changes workload ordinal of ws.
func with(ws []Workload, ordinal int, change func(*Workload)) []Workload {
	change(&ws[ordinal])
	return ws
}

func TestPlan(t *testing.T) {
	sick := func(ms []Member, ordinals ...int) []Member {
		for _, o := range ordinals {
			ms[o].Healthy = false
		}
		return ms
	}
	unreachable := func(ms []Member, o int) []Member { ms[o].Healthy, ms[o].Unreachable = false, true; return ms }
	learner := func(ms []Member, o int, started, healthy bool, index uint64) []Member {
		return append(ms, Member{Ordinal: o, ID: 99, Learner: true, Started: started, Healthy: healthy, Index: index})
	}
	waiting := func(dataOf uint64) func(*Workload) {
		return func(w *Workload) { w.Waiting, w.DataOf = true, dataOf }
	}
	failing := func(w *Workload) { w.Failure = "CrashLoopBackOff" }
	outdated := func(w *Workload) { w.Outdated = true }
	unready := func(w *Workload) { w.Unready = true }
	obs := func(ms []Member, ws []Workload) Observed {
		n := 0
		for _, w := range ws {
			n += boolInt(w.Exists)
		}
		return Observed{Reachable: true, Members: ms, Workloads: n, Workload: ws, LeaderIndex: 100}
	}
	tests := []struct {
		name    string
		desired int
		obs     Observed
		want    Action
		ordinal int
	}{
		{"nothing yet: bootstrap one member", 3, Observed{}, ActionBootstrap, 0},
		{"start the first member of a new cluster", 3, Observed{Workloads: 1, Workload: []Workload{{Exists: true, Waiting: true}}}, ActionRelease, 0},
		{"workloads but no answer: wait", 3, Observed{Workloads: 2, Workload: running(2)}, ActionWait, 0},
		{"never a new cluster over volumes with data", 3, Observed{Workload: with(running(3), 0, func(w *Workload) { w.Exists = false })}, ActionRecover, 2},
		{"no answer: release a member waiting on its data", 3, Observed{Workloads: 3, Workload: with(running(3), 1, waiting(2))}, ActionRelease, 1},
		{"release a member waiting on its data", 3, obs(sick(voters(3), 1), with(running(3), 1, waiting(2))), ActionRelease, 1},
		{"make the workload of a member whose workload is gone", 3, obs(voters(3), running(2)), ActionStart, 2},
		{"grow one at a time", 3, obs(voters(1), running(1)), ActionAdd, 1},
		{"add into the gap of a replaced member once its volume is empty", 3, obs([]Member{voters(3)[0], voters(3)[2]}, with(running(3), 1, waiting(0))), ActionAdd, 1},
		{"wipe the stale volume of a removed member first", 3, obs([]Member{voters(3)[0], voters(3)[2]}, running(3)), ActionWipe, 1},
		{"wait for the workload of a replaced member to stop", 3,
			obs([]Member{voters(3)[0], voters(3)[2]}, with(running(3), 1, func(w *Workload) { w.VolumeGone, w.Unready = true, true })), ActionWait, 1},
		{"wipe again the workload of a replaced member stranded on a node that does not answer", 3,
			obs([]Member{voters(3)[0], voters(3)[2]}, with(running(3), 1, func(w *Workload) { w.VolumeGone, w.Unready, w.Stranded = true, true, true })), ActionWipe, 1},
		{"a member's own stranded workload is left for its node", 3,
			obs(sick(voters(3), 1), with(running(3), 1, func(w *Workload) { w.Unready, w.Stranded = true, true })), ActionNone, 0},
		{"release an added learner on its empty volume", 3, obs(learner(voters(1), 1, false, false, 0), append(running(1), Workload{Ordinal: 1, Exists: true, Waiting: true})), ActionRelease, 1},
		{"make the workload of an added learner", 3, obs(learner(voters(1), 1, false, false, 0), running(1)), ActionStart, 1},
		{"wait for a learner to start", 3, obs(learner(voters(1), 1, false, false, 0), running(2)), ActionWait, 1},
		{"wait for a learner to catch up", 3, obs(learner(voters(1), 1, true, true, 10), running(2)), ActionWait, 1},
		{"promote a caught-up learner", 3, obs(learner(voters(1), 1, true, true, 95), running(2)), ActionPromote, 1},
		{"no add while a member is unhealthy", 5, obs(sick(voters(3), 2), running(3)), ActionWait, 0},
		{"shrink from the highest ordinal", 3, obs(voters(5), running(5)), ActionRemove, 4},
		{"stable", 3, obs(voters(3), running(3)), ActionNone, 0},
		{"no quorum: wait", 3, obs(sick(voters(3), 0, 1), running(3)), ActionWait, 0},
		{"refuse a removal that loses quorum", 2, obs(sick(voters(3), 0), running(3)), ActionRefuse, 2},
		{"removing an unhealthy last member is safe", 2, obs(sick(voters(3), 2), running(3)), ActionRemove, 2},
		{"replace a member whose volume is gone", 3, obs(sick(voters(3), 1), with(running(3), 1, func(w *Workload) { w.VolumeGone = true })), ActionReplace, 1},
		{"replace a member back on an empty volume", 3, obs(sick(voters(3), 1), with(running(3), 1, waiting(0))), ActionReplace, 1},
		{"replace a member unreachable for the delay", 3, obs(unreachable(voters(3), 1), running(3)), ActionReplace, 1},
		{"a member that is only unhealthy stays", 3, obs(sick(voters(3), 1), running(3)), ActionNone, 0},
		{"a member failing because of its spec stays, however long", 3, obs(unreachable(voters(3), 1), with(running(3), 1, failing)), ActionNone, 0},
		{"no replacement while another member is unhealthy", 5, obs(sick(unreachable(voters(5), 1), 3), running(5)), ActionRefuse, 1},
		{"no replacement while a replaced member's learner has not started", 5,
			obs(learner(unreachable(voters(4), 3), 4, false, false, 0), with(running(5), 4, failing)), ActionWait, 4},
		{"stop a workload without a member", 3, obs(voters(3), running(4)), ActionRemove, 3},
		{"restart the highest outdated member first", 3, obs(voters(3), with(with(running(3), 2, outdated), 1, outdated)), ActionRestart, 2},
		{"restart nothing while a member is unhealthy", 3, obs(sick(voters(3), 0), with(running(3), 2, outdated)), ActionNone, 0},
		{"no restart while the member restarted last is not Ready yet", 3, obs(voters(3), with(with(running(3), 1, outdated), 2, unready)), ActionWait, 2},
		{"no new cluster on an earlier cluster's volume: wait for it to go", 3, Observed{Workload: []Workload{earlierVolume(0, false)}}, ActionAwaitVolumes, 0},
		{"no member added on an earlier cluster's volume", 3, obs(voters(1), append(running(1), earlierVolume(1, false))), ActionAwaitVolumes, 1},
		{"delete a learner's pod waiting on an earlier cluster's volume, so that it can go", 3,
			obs(learner(voters(1), 1, false, false, 0), append(running(1), earlierVolume(1, true))), ActionRestart, 1},
		{"a member running on an earlier cluster's volume is left alone", 3,
			obs(voters(3), with(running(3), 2, func(w *Workload) { w.EarlierVolume, w.VolumeGone = true, true })), ActionNone, 0},
		{"restart a failing outdated member at once", 3, obs(sick(voters(3), 1), with(with(running(3), 1, outdated), 1, failing)), ActionRestart, 1},
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

// earlierVolume is the workload of ordinal on a volume an earlier cluster of the same name
// left; waiting: its pod waits behind its gate.
func earlierVolume(ordinal int, waiting bool) Workload {
	return Workload{Ordinal: ordinal, Exists: waiting, Waiting: waiting, Unready: waiting, VolumeGone: true, EarlierVolume: true}
}
