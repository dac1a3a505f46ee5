package gordon

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1 "github.com/quintet-operators/quintet/operators/gordon/api/v1"
	"github.com/quintet-operators/quintet/shared/pods"
)

// defaultRolloutBound is maxSurge's and maxUnavailable's default, as in a Deployment.
var defaultRolloutBound = intstr.FromString("25%")

// podPlan is what one pass changes: how many pods to create and which to delete.
type podPlan struct {
	create int
	delete []corev1.Pod
}

// rolloutBounds resolves g's maxSurge (rounded up) and maxUnavailable (rounded down)
// against its replicas, as a Deployment does; when both come to 0 one pod may be
// unavailable, or the rollout could never start.
func rolloutBounds(g *v1.Gordon) (surge, unavailable int) {
	maxSurge, maxUnavailable := &defaultRolloutBound, &defaultRolloutBound
	if ru := g.Spec.Gordon.RollingUpdate; ru != nil {
		if ru.MaxSurge != nil {
			maxSurge = ru.MaxSurge
		}
		if ru.MaxUnavailable != nil {
			maxUnavailable = ru.MaxUnavailable
		}
	}
	desired := int(g.DesiredReplicas())
	// The CRD admits only numbers and percentages, which always resolve.
	surge, _ = intstr.GetScaledValueFromIntOrPercent(maxSurge, desired, true)
	unavailable, _ = intstr.GetScaledValueFromIntOrPercent(maxUnavailable, desired, false)
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, min(unavailable, desired)
}

// splitByTemplate splits active pods into those made from the pod template with this hash
// and the outdated rest.
func splitByTemplate(active []corev1.Pod, hash string) (current, outdated []corev1.Pod) {
	for _, p := range active {
		if p.Labels[v1.TemplateHashLabel] == hash {
			current = append(current, p)
		} else {
			outdated = append(outdated, p)
		}
	}
	return current, outdated
}

// planFor is this pass's plan for g: scale or roll its active pods, leaving their places to
// terminated pods whose replacement backs off.
func planFor(g *v1.Gordon, res syncResult) podPlan {
	surge, unavailable := rolloutBounds(g)
	plan := planPods(int(g.DesiredReplicas()), surge, unavailable, res.current, res.outdated)
	if res.replaceAfter > 0 {
		plan.create = max(0, plan.create-len(res.terminated))
	}
	return plan
}

// planPods decides one pass's creations and deletions from the active pods, split into the
// current template's and outdated ones. Without outdated pods it scales. During a rollout
// it creates current pods up to replicas+surge pods in all, and deletes outdated pods while
// at least replicas-unavailable pods stay Ready: unready outdated pods first (they serve
// nothing), as a Deployment's RollingUpdate does.
func planPods(desired, surge, unavailable int, current, outdated []corev1.Pod) podPlan {
	if len(outdated) == 0 {
		diff := len(current) - desired
		if diff < 0 {
			return podPlan{create: -diff}
		}
		return podPlan{delete: podsToDelete(current, diff)}
	}
	total := len(current) + len(outdated)
	// Scaled down during a rollout: what is past replicas+surge goes now, outdated pods first.
	if excess := total - (desired + surge); excess > 0 {
		plan := podPlan{delete: podsToDelete(outdated, excess)}
		return podPlan{delete: append(plan.delete, podsToDelete(current, excess-len(plan.delete))...)}
	}
	plan := podPlan{create: max(0, min(desired-len(current), desired+surge-total))}
	minAvailable := desired - unavailable
	// Unready outdated pods may go while the pods that can still become Ready (all but the
	// current template's unready ones) stay at least minAvailable; Ready outdated pods while
	// the Ready pods stay at least minAvailable.
	cleanup := total - minAvailable - (len(current) - countReady(current))
	budget := countReady(current) + countReady(outdated) - minAvailable
	for _, p := range podsToDelete(outdated, len(outdated)) {
		if pods.Ready(&p) {
			if budget <= 0 {
				break
			}
			budget--
		} else {
			if cleanup <= 0 {
				continue
			}
			cleanup--
		}
		plan.delete = append(plan.delete, p)
	}
	return plan
}

// countReady counts the Ready pods.
func countReady(list []corev1.Pod) int {
	n := 0
	for i := range list {
		if pods.Ready(&list[i]) {
			n++
		}
	}
	return n
}
