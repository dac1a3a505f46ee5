// Package membership decides and carries out etcd membership changes one safe step at a time:
// bootstrap one member, add members as learners and promote them once caught up, remove
// members through the cluster API before their workload goes, replace lost members, and never
// take the cluster below quorum on purpose. Plan is pure; Engine observes and acts.
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
	ActionBootstrap Action = "Bootstrap" // start member 0 as a new one-member cluster
	ActionAdd       Action = "Add"       // add the lowest free ordinal as a learner and (re)start it empty
	ActionStart     Action = "Start"     // start the workload of a member already added
	ActionPromote   Action = "Promote"   // promote a caught-up learner to a voter
	ActionRemove    Action = "Remove"    // remove the highest ordinal, then stop its workload
	ActionReplace   Action = "Replace"   // remove a lost member; a later Add brings it back empty
	ActionRefuse    Action = "Refuse"    // the change would lose quorum: do nothing, say why
)

// Member is one member as the engine sees it.
type Member struct {
	Ordinal int
	ID      uint64
	Learner bool
	Started bool // the member has run (etcd knows its name)
	Healthy bool // it answered a status request
	Lost    bool // its workload or data is gone for good; replace it
	Index   uint64
}

// Observed is the state one pass starts from.
type Observed struct {
	// Reachable is false when no member answered: the cluster cannot be read.
	Reachable bool
	// Members as etcd lists them, with health; empty when not Reachable.
	Members []Member
	// Workloads is how many member workloads exist (ordinals 0..Workloads-1).
	Workloads int
	// LeaderIndex is the leader's raft index, to tell whether a learner caught up.
	LeaderIndex uint64
}

// Step is what to do next, and why.
type Step struct {
	Action  Action
	Ordinal int
	ID      uint64
	Reason  string
}

// learnerCatchUpSlack is how far behind the leader's raft index a learner may be and still be
// promoted; etcd itself refuses a promotion of a learner that is not in sync.
const learnerCatchUpSlack = 10

// Quorum is the number of voting members that must agree in a cluster of n.
func Quorum(n int) int { return n/2 + 1 }

// Plan chooses the next step towards desired members. It changes one member at a time and
// refuses any removal that would leave fewer healthy voters than the new quorum.
func Plan(desired int, o Observed) Step {
	if !o.Reachable {
		if o.Workloads == 0 {
			return Step{Action: ActionBootstrap, Ordinal: 0, Reason: "no members yet: starting a one-member cluster"}
		}
		return Step{Action: ActionWait, Reason: "no member answers"}
	}
	members := slices.Clone(o.Members)
	slices.SortFunc(members, func(a, b Member) int { return a.Ordinal - b.Ordinal })
	voters, healthyVoters := 0, 0
	for _, m := range members {
		if !m.Learner {
			voters++
			if m.Healthy {
				healthyVoters++
			}
		}
	}
	if healthyVoters < Quorum(voters) {
		return Step{Action: ActionWait, Reason: fmt.Sprintf("only %d of %d voting members are healthy: no quorum", healthyVoters, voters)}
	}

	// Finish what is in flight first: a learner is started, then promoted.
	for _, m := range members {
		if !m.Learner {
			continue
		}
		switch {
		case m.Ordinal >= o.Workloads:
			return Step{Action: ActionStart, Ordinal: m.Ordinal, ID: m.ID, Reason: "learner added; starting its workload"}
		case !m.Started || !m.Healthy:
			return Step{Action: ActionWait, Ordinal: m.Ordinal, ID: m.ID, Reason: "waiting for the learner to start"}
		case o.LeaderIndex > m.Index+learnerCatchUpSlack:
			return Step{Action: ActionWait, Ordinal: m.Ordinal, ID: m.ID, Reason: "waiting for the learner to catch up with the leader"}
		default:
			return Step{Action: ActionPromote, Ordinal: m.Ordinal, ID: m.ID, Reason: "learner caught up"}
		}
	}

	// A lost voting member is replaced in place, which is safe while the others keep quorum
	// of the smaller cluster its removal leaves.
	for _, m := range members {
		if m.Lost {
			if healthyVoters-boolInt(m.Healthy) < Quorum(voters-1) {
				return Step{Action: ActionRefuse, Ordinal: m.Ordinal, ID: m.ID, Reason: "replacing the lost member would lose quorum"}
			}
			return Step{Action: ActionReplace, Ordinal: m.Ordinal, ID: m.ID, Reason: "member lost its workload or data"}
		}
	}

	switch n := len(members); {
	case n < desired:
		if healthyVoters < voters {
			return Step{Action: ActionWait, Reason: "not adding a member while another is unhealthy"}
		}
		return Step{Action: ActionAdd, Ordinal: firstFreeOrdinal(members), Reason: fmt.Sprintf("growing from %d to %d members", n, desired)}
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
