// Package membership decides and carries out etcd membership changes one safe step at a time:
// bootstrap one member, add members as learners and promote them once caught up, remove
// members through the cluster API before their workload goes, replace members whose data is
// really gone, restart members one at a time onto a new spec, and never take the cluster
// below quorum on purpose. Plan is pure; Engine observes and acts.
package membership

import (
	"fmt"
	"slices"
)

// Action is the kind of one membership step.
type Action string

// The steps Plan can choose.
const (
	ActionNone      Action = "None"      // the membership matches the desired size
	ActionWait      Action = "Wait"      // something is in flight or unreachable: look again later
	ActionBootstrap Action = "Bootstrap" // make the workload of member 0, to start a one-member cluster
	ActionRecover   Action = "Recover"   // make the workloads again for the volumes left with data
	ActionRelease   Action = "Release"   // let a waiting workload start: with its data, or joining as told
	ActionAdd       Action = "Add"       // add the lowest free ordinal as a learner
	ActionStart     Action = "Start"     // make the workload of a member etcd lists (a learner just added)
	ActionPromote   Action = "Promote"   // promote a caught-up learner to a voter
	ActionRemove    Action = "Remove"    // remove the highest ordinal, then its workload
	ActionReplace   Action = "Replace"   // remove a member whose data is gone, and wipe its workload
	ActionWipe      Action = "Wipe"      // empty a volume holding the data of a member etcd no longer lists
	ActionRestart   Action = "Restart"   // restart an outdated workload onto the current spec
	ActionRefuse    Action = "Refuse"    // the change would lose quorum or data: do nothing, say why
	// ActionAwaitVolumes: an earlier cluster's volumes are in the way: look again later.
	ActionAwaitVolumes Action = "AwaitVolumes"
)

// Member is one member as the engine sees it.
type Member struct {
	Ordinal int
	ID      uint64
	Learner bool
	Started bool // the member has run (etcd knows its name)
	Healthy bool // it answered a status request
	Index   uint64
	Version string
	// DBSize and DBSizeInUse of its database, as it reports them (when Healthy).
	DBSize, DBSizeInUse int64
	// Unreachable: neither the operator nor the leader has reached it for the replacement
	// delay. Its workload's state tells whether it may be replaced.
	Unreachable bool
}

// Observed is the state one pass starts from.
type Observed struct {
	// Reachable is false when no member answered: the cluster cannot be read.
	Reachable bool
	// Members as etcd lists them, with health; empty when not Reachable.
	Members []Member
	// Workloads is how many member workloads exist (ordinals 0..Workloads-1).
	Workloads int
	// Workload describes them by ordinal, and past them the volumes left without a workload.
	Workload []Workload
	// LeaderIndex is the leader's raft index, to tell whether a learner caught up.
	LeaderIndex uint64
}

// workload returns the workload of ordinal; the zero Workload when there is none.
func (o Observed) workload(ordinal int) Workload {
	if ordinal < len(o.Workload) {
		return o.Workload[ordinal]
	}
	return Workload{Ordinal: ordinal}
}

// dataVolumes is one past the highest ordinal whose volume holds a member's data.
func (o Observed) dataVolumes() int {
	n := 0
	for _, w := range o.Workload {
		if w.DataOf != 0 && !w.VolumeGone {
			n = w.Ordinal + 1
		}
	}
	return n
}

// Step is what to do next, and why.
type Step struct {
	Action  Action
	Ordinal int
	ID      uint64
	// New: a Release that starts a new cluster (initial-cluster-state new).
	New    bool
	Reason string
}

// learnerCatchUpSlack is how far behind the leader's raft index a learner may be and still be
// promoted; etcd itself refuses a promotion of a learner that is not in sync.
const learnerCatchUpSlack = 10

// Quorum is the number of voting members that must agree in a cluster of n.
func Quorum(n int) int { return n/2 + 1 }

// Plan chooses the next step towards desired members. It changes one member at a time,
// refuses any removal that would leave fewer healthy voters than the new quorum, and
// replaces a member only when its data is gone or it is unreachable with a sound workload.
func Plan(desired int, o Observed) Step {
	if step, ok := planEarlierVolumes(o); ok {
		return step
	}
	if !o.Reachable {
		return planUnreachable(o)
	}
	members := slices.Clone(o.Members)
	slices.SortFunc(members, func(a, b Member) int { return a.Ordinal - b.Ordinal })
	if step, ok := releaseWithData(o, members); ok {
		return step
	}
	for _, m := range members {
		if m.Ordinal >= o.Workloads {
			return Step{Action: ActionStart, Ordinal: m.Ordinal, ID: m.ID, Reason: fmt.Sprintf("making the workload of member %d", m.Ordinal)}
		}
	}
	voters, healthyVoters, healthy := 0, 0, 0
	for _, m := range members {
		healthy += boolInt(m.Healthy)
		if !m.Learner {
			voters++
			healthyVoters += boolInt(m.Healthy)
		}
	}
	if healthyVoters < Quorum(voters) {
		return Step{Action: ActionWait, Reason: fmt.Sprintf("only %d of %d voting members are healthy: no quorum", healthyVoters, voters)}
	}
	allHealthy := healthy == len(members)
	for _, next := range []func() (Step, bool){
		func() (Step, bool) { return planLearner(o, members) },
		func() (Step, bool) { return planReplacement(o, members, healthyVoters, voters) },
		func() (Step, bool) { return planStaleVolume(o, members) },
		func() (Step, bool) { return planStranded(o, members) },
		func() (Step, bool) { return planRestart(o, members, allHealthy) },
	} {
		if step, ok := next(); ok {
			return step
		}
	}
	return planSize(desired, o, members, allHealthy, healthyVoters, voters)
}

// planEarlierVolumes waits for the volumes an earlier cluster of the same name left to be
// deleted before anything starts or joins: a cluster deleted and made again at once (a
// restore under its own name) finds its members' claims still there, or being deleted, until
// the garbage collector catches up. A pod made on such a claim would start on the earlier
// cluster's data, or keep the claim from going while it waits behind its gate (the
// StatefulSet makes no pod on a claim being deleted, and backs off): that waiting pod is
// deleted, so the claim can go and the StatefulSet makes both again.
func planEarlierVolumes(o Observed) (Step, bool) {
	for _, w := range o.Workload {
		switch {
		case !w.EarlierVolume:
		case w.Exists && w.Waiting:
			return Step{Action: ActionRestart, Ordinal: w.Ordinal,
				Reason: fmt.Sprintf("the volume of member %d is an earlier cluster's, which goes once no pod uses it: deleting the pod waiting on it", w.Ordinal)}, true
		case !w.Exists || w.Unready:
			return Step{Action: ActionAwaitVolumes, Ordinal: w.Ordinal,
				Reason: fmt.Sprintf("waiting for the garbage collector to delete the volume of member %d, an earlier cluster's of this name", w.Ordinal)}, true
		}
	}
	return Step{}, false
}

// planUnreachable: no member answers. Start the first member of a new cluster, or bring
// back the workloads of volumes that hold data; never a new cluster over existing data.
func planUnreachable(o Observed) Step {
	data := o.dataVolumes()
	for _, w := range o.Workload {
		if w.Exists && w.Waiting && w.DataOf != 0 && !w.VolumeGone {
			return Step{Action: ActionRelease, Ordinal: w.Ordinal, ID: w.DataOf, Reason: "restarting a member on its data"}
		}
	}
	switch {
	case o.Workloads < data:
		return Step{Action: ActionRecover, Ordinal: data - 1,
			Reason: fmt.Sprintf("volumes of %d members hold data but their workloads are gone: making them again", data)}
	case data > 0:
		return Step{Action: ActionWait, Reason: "no member answers"}
	case o.Workloads == 0:
		return Step{Action: ActionBootstrap, Ordinal: 0, Reason: "no members yet: starting a one-member cluster"}
	case o.Workloads == 1 && o.workload(0).Waiting:
		return Step{Action: ActionRelease, Ordinal: 0, New: true, Reason: "starting the first member of a new cluster"}
	}
	return Step{Action: ActionWait, Reason: "no member answers"}
}

// releaseWithData lets a waiting workload whose volume holds its member's data start: it
// restarts as itself, whatever else is going on.
func releaseWithData(o Observed, members []Member) (Step, bool) {
	for _, m := range members {
		if w := o.workload(m.Ordinal); w.Exists && w.Waiting && !w.VolumeGone && w.DataOf == m.ID {
			return Step{Action: ActionRelease, Ordinal: m.Ordinal, ID: m.ID, Reason: "restarting the member on its data"}, true
		}
	}
	return Step{}, false
}

// planLearner finishes what is in flight: a learner's workload is made, released on an
// empty volume, then the learner is promoted once caught up. A learner is never replaced.
func planLearner(o Observed, members []Member) (Step, bool) {
	for _, m := range members {
		if !m.Learner {
			continue
		}
		w := o.workload(m.Ordinal)
		step := Step{Ordinal: m.Ordinal, ID: m.ID}
		switch {
		case !m.Started && w.Waiting && w.DataOf != 0:
			step.Action, step.Reason = ActionWipe, "the learner's volume holds an earlier member's data"
		case !m.Started && w.Waiting && !w.VolumeGone:
			step.Action, step.Reason = ActionRelease, "starting the learner on an empty volume"
		case w.Failure != "":
			step.Action, step.Reason = ActionWait, "the learner cannot start: "+w.Failure
		case !m.Started || !m.Healthy:
			step.Action, step.Reason = ActionWait, "waiting for the learner to start"
		case o.LeaderIndex > m.Index+learnerCatchUpSlack:
			step.Action, step.Reason = ActionWait, "waiting for the learner to catch up with the leader"
		default:
			step.Action, step.Reason = ActionPromote, "learner caught up"
		}
		return step, true
	}
	return Step{}, false
}

// planReplacement replaces a voting member whose data is gone (its volume was deleted, or
// its workload came back on a volume that does not hold its data), or that neither the
// operator nor the leader reached for the replacement delay while its workload is sound.
// A member that answers, or fails because of its spec, is never replaced; nor is one while
// another member is unhealthy: one replacement at a time, and none after one that failed.
func planReplacement(o Observed, members []Member, healthyVoters, voters int) (Step, bool) {
	for _, m := range members {
		if m.Learner || m.Ordinal >= o.Workloads || m.Healthy {
			continue
		}
		w := o.workload(m.Ordinal)
		dataGone := w.VolumeGone || (w.Waiting && w.DataOf != m.ID)
		gone := m.Unreachable && !w.Waiting && w.Failure == ""
		if !dataGone && !gone {
			continue
		}
		why := fmt.Sprintf("member %d lost its data", m.Ordinal)
		if !dataGone {
			why = fmt.Sprintf("member %d has been unreachable by the operator and the leader for the replacement delay", m.Ordinal)
		}
		if countUnhealthy(members) > 1 || healthyVoters < Quorum(voters-1) {
			return Step{Action: ActionRefuse, Ordinal: m.Ordinal, ID: m.ID,
				Reason: why + ", but another member is unhealthy too: replacing it now could lose quorum"}, true
		}
		return Step{Action: ActionReplace, Ordinal: m.Ordinal, ID: m.ID, Reason: why}, true
	}
	return Step{}, false
}

// planStaleVolume wipes the volume of a workload whose member etcd no longer lists (a
// replacement interrupted between the removal and the wipe): it must not start on that data.
func planStaleVolume(o Observed, members []Member) (Step, bool) {
	for _, w := range o.Workload {
		if !w.Exists || w.DataOf == 0 || w.VolumeGone {
			continue
		}
		if !slices.ContainsFunc(members, func(m Member) bool { return m.Ordinal == w.Ordinal }) && w.Ordinal < len(members) {
			return Step{Action: ActionWipe, Ordinal: w.Ordinal, Reason: "the volume holds the data of a member etcd no longer lists"}, true
		}
	}
	return Step{}, false
}

// planStranded wipes again the workload of a member etcd no longer lists (a replaced one)
// while it is stranded on a node that does not answer: its replacement's workload is made
// only once it is gone, and a node that is down or cut off never confirms it stopped.
func planStranded(o Observed, members []Member) (Step, bool) {
	for _, w := range o.Workload {
		if w.Stranded && !slices.ContainsFunc(members, func(m Member) bool { return m.Ordinal == w.Ordinal }) {
			return Step{Action: ActionWipe, Ordinal: w.Ordinal,
				Reason: fmt.Sprintf("the workload of replaced member %d is on a node that has not confirmed it stopped: deleting it without waiting", w.Ordinal)}, true
		}
	}
	return Step{}, false
}

// planRestart restarts workloads onto the current spec one at a time: a failing outdated
// one at once (it serves nothing: this is how a reverted spec brings it back), any other
// only while every member is healthy and every workload Ready, so each waits for the one
// before to serve again, in etcd and behind its readiness probe.
func planRestart(o Observed, members []Member, allHealthy bool) (Step, bool) {
	for _, m := range members {
		if w := o.workload(m.Ordinal); w.Exists && w.Outdated && !w.Waiting && w.Failure != "" {
			return Step{Action: ActionRestart, Ordinal: m.Ordinal, ID: m.ID, Reason: "restarting a failing member onto the current spec"}, true
		}
	}
	if !allHealthy {
		return Step{}, false
	}
	for i := len(members) - 1; i >= 0; i-- {
		m := members[i]
		if w := o.workload(m.Ordinal); w.Exists && w.Outdated && !w.Waiting {
			if u, ok := firstUnready(o); ok {
				return Step{Action: ActionWait, Ordinal: u,
					Reason: fmt.Sprintf("waiting for member %d to pass its readiness probe before restarting the next one", u)}, true
			}
			return Step{Action: ActionRestart, Ordinal: m.Ordinal, ID: m.ID, Reason: "rolling members onto the current spec one at a time"}, true
		}
	}
	return Step{}, false
}

// firstUnready is the lowest ordinal of a running workload that is not Ready.
func firstUnready(o Observed) (int, bool) {
	for _, w := range o.Workload {
		if w.Exists && w.Unready {
			return w.Ordinal, true
		}
	}
	return 0, false
}

// planSize grows or shrinks the membership by one member.
func planSize(desired int, o Observed, members []Member, allHealthy bool, healthyVoters, voters int) Step {
	switch n := len(members); {
	case n < desired:
		if !allHealthy {
			return Step{Action: ActionWait, Reason: "not adding a member while another is unhealthy"}
		}
		ordinal := firstFreeOrdinal(members)
		if w := o.workload(ordinal); ordinal < o.Workloads && (!w.Waiting || w.DataOf != 0 || w.VolumeGone) {
			return Step{Action: ActionWait, Ordinal: ordinal, Reason: fmt.Sprintf("waiting for the workload of member %d to come back with an empty volume", ordinal)}
		}
		return Step{Action: ActionAdd, Ordinal: ordinal, Reason: fmt.Sprintf("growing from %d to %d members", n, desired)}
	case n > desired:
		last := members[n-1]
		remainingHealthy := healthyVoters - boolInt(last.Healthy && !last.Learner)
		if remainingHealthy < Quorum(voters-boolInt(!last.Learner)) {
			return Step{Action: ActionRefuse, Ordinal: last.Ordinal, ID: last.ID,
				Reason: fmt.Sprintf("removing member %d would leave %d healthy voters, below quorum", last.Ordinal, remainingHealthy)}
		}
		return Step{Action: ActionRemove, Ordinal: last.Ordinal, ID: last.ID, Reason: fmt.Sprintf("scaling in from %d to %d members", n, desired)}
	case o.Workloads > n:
		// A workload without a member (a removal whose workload stop failed): stop it.
		return Step{Action: ActionRemove, Ordinal: o.Workloads - 1, Reason: "workload without a member"}
	}
	return Step{Action: ActionNone, Reason: "membership matches the desired size"}
}

func countUnhealthy(members []Member) int {
	n := 0
	for _, m := range members {
		n += boolInt(!m.Healthy)
	}
	return n
}

// firstFreeOrdinal is the lowest ordinal without a member: the gap a replaced member left,
// or the next one. members are sorted by ordinal.
func firstFreeOrdinal(members []Member) int {
	for i, m := range members {
		if m.Ordinal != i {
			return i
		}
	}
	return len(members)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
