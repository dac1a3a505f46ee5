package etcdcluster

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/membership"
	"github.com/quintet-operators/quintet/shared/pods"
)

// statefulSetRunner runs members as the pods of the cluster's StatefulSet, one volume
// claim each: the membership.Runner of a real cluster.
type statefulSetRunner struct {
	r        *Reconciler
	c        *v1beta2.EtcdCluster
	template memberTemplate // what members start with
}

func (s *statefulSetRunner) key(name string) client.ObjectKey {
	return client.ObjectKey{Namespace: s.c.Namespace, Name: name}
}

// Workloads reads the StatefulSet, the member pods and the volume claims.
func (s *statefulSetRunner) Workloads(ctx context.Context) ([]membership.Workload, error) {
	n, updateRevision := 0, ""
	sts := &appsv1.StatefulSet{}
	if err := s.r.Get(ctx, s.key(s.c.Name), sts); client.IgnoreNotFound(err) != nil {
		return nil, err
	} else if err == nil {
		n, updateRevision = int(ptr.Deref(sts.Spec.Replicas, 1)), sts.Status.UpdateRevision
	}
	podOf, claims, err := s.podsAndClaims(ctx)
	if err != nil {
		return nil, err
	}
	last := n - 1
	for o, claim := range claims {
		if claim.Annotations[v1beta2.MemberIDAnnotation] != "" || s.earlier(claim) {
			last = max(last, o)
		}
	}
	workloads := make([]membership.Workload, 0, last+1)
	for o := 0; o <= last; o++ {
		w := membership.Workload{Ordinal: o, Exists: o < n, VolumeGone: true}
		if claim, ok := claims[o]; ok && s.earlier(claim) {
			w.EarlierVolume = true
		} else if ok {
			w.VolumeGone = claim.DeletionTimestamp != nil
			w.DataOf, _ = strconv.ParseUint(claim.Annotations[v1beta2.MemberIDAnnotation], 16, 64)
		}
		pod, ok := podOf[o]
		w.Unready = w.Exists && (!ok || pod.DeletionTimestamp != nil || !pods.Ready(pod)) // not Ready, or being stopped
		if ok {
			w.Waiting = gated(pod)
			w.Outdated = updateRevision != "" && pod.Labels[appsv1.ControllerRevisionHashLabelKey] != updateRevision
			w.Failure = pods.Failure(pod)
			w.Stranded = stranded(pod, time.Now())
		}
		workloads = append(workloads, w)
	}
	return workloads, nil
}

// podsAndClaims are the cluster's member pods and volume claims by ordinal.
func (s *statefulSetRunner) podsAndClaims(ctx context.Context) (map[int]*corev1.Pod, map[int]*corev1.PersistentVolumeClaim, error) {
	in, labels := client.InNamespace(s.c.Namespace), client.MatchingLabels(selectorLabels(s.c))
	podList, claimList := &corev1.PodList{}, &corev1.PersistentVolumeClaimList{}
	if err := s.r.List(ctx, podList, in, labels); err != nil {
		return nil, nil, err
	}
	if err := s.r.List(ctx, claimList, in, labels); err != nil {
		return nil, nil, err
	}
	podOf, claims := map[int]*corev1.Pod{}, map[int]*corev1.PersistentVolumeClaim{}
	for i := range podList.Items {
		if o, ok := ordinalOf(podList.Items[i].Name, s.c.Name+"-"); ok {
			podOf[o] = &podList.Items[i]
		}
	}
	for i := range claimList.Items {
		if o, ok := ordinalOf(claimList.Items[i].Name, volumeName+"-"+s.c.Name+"-"); ok {
			claims[o] = &claimList.Items[i]
		}
	}
	return podOf, claims, nil
}

// ordinalOf reads the ordinal of a name made of prefix and a number.
func ordinalOf(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	o, err := strconv.Atoi(rest)
	return o, err == nil && o >= 0 && strconv.Itoa(o) == rest
}

// earlier reports whether claim is an earlier cluster's of this name: an EtcdCluster of this
// name owns it, not this one (RecordData makes a cluster its claims' owner). The garbage
// collector deletes it; a claim orphaned on purpose has no such owner, and is this cluster's.
func (s *statefulSetRunner) earlier(claim *corev1.PersistentVolumeClaim) bool {
	earlier := false
	for _, ref := range claim.OwnerReferences {
		if ref.UID == s.c.UID {
			return false
		}
		gv, _ := schema.ParseGroupVersion(ref.APIVersion)
		earlier = earlier || (ref.Kind == "EtcdCluster" && ref.Name == s.c.Name && gv.Group == v1beta2.GroupVersion.Group)
	}
	return earlier
}

// strandedAfter is how long past the end of its grace period a pod's deletion may go
// unconfirmed before its node counts as not answering: a kubelet that runs confirms it
// within the grace period.
const strandedAfter = 15 * time.Second

// stranded reports whether pod is being deleted and its kubelet has not confirmed it for
// strandedAfter past its grace period (its deletion timestamp): its node is down or cut off.
func stranded(pod *corev1.Pod, now time.Time) bool {
	return pod.DeletionTimestamp != nil && now.Sub(pod.DeletionTimestamp.Time) > strandedAfter
}

func gated(pod *corev1.Pod) bool {
	return slices.ContainsFunc(pod.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == v1beta2.StartGate })
}

// Scale sets the StatefulSet's replicas and deletes the volume claims past them: the
// StatefulSet's own WhenScaled deletion waits for every owner of a claim, and the
// EtcdCluster owns them too.
func (s *statefulSetRunner) Scale(ctx context.Context, n int) error {
	if err := s.r.ensure(ctx, s.c, statefulSet(s.c, int32(n), s.template)); err != nil { //nolint:gosec // n <= 10
		return err
	}
	_, claims, err := s.podsAndClaims(ctx)
	if err != nil {
		return err
	}
	for o, claim := range claims {
		if o >= n && claim.DeletionTimestamp == nil {
			ctrl.LoggerFrom(ctx).Info("Deleting the volume of a member scaled away", "persistentVolumeClaim", claim.Name)
			if err := s.r.Delete(ctx, claim); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting volume claim %s: %w", claim.Name, err)
			}
		}
	}
	return nil
}

// Release writes how the member joins on its pod and lifts the pod's gate.
func (s *statefulSetRunner) Release(ctx context.Context, ordinal int, initialCluster, state string) error {
	pod := &corev1.Pod{}
	if err := s.r.Get(ctx, s.key(podName(s.c, ordinal)), pod); err != nil {
		return fmt.Errorf("releasing member %d: %w", ordinal, err)
	}
	if !gated(pod) {
		return nil
	}
	patch := client.MergeFromWithOptions(pod.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if state == "new" && s.c.Spec.Restore != nil {
		// The member stays behind its gate until its data is ready; a later pass releases it.
		if ready, err := s.r.prepareRestore(ctx, s.c, pod, initialCluster); err != nil || !ready {
			return err
		}
	}
	metav1.SetMetaDataAnnotation(&pod.ObjectMeta, v1beta2.InitialClusterAnnotation, initialCluster)
	metav1.SetMetaDataAnnotation(&pod.ObjectMeta, v1beta2.InitialClusterStateAnnotation, state)
	pod.Spec.SchedulingGates = slices.DeleteFunc(pod.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == v1beta2.StartGate })
	ctrl.LoggerFrom(ctx).Info("Starting member", "pod", pod.Name, "initialCluster", initialCluster, "initialClusterState", state)
	return s.r.Patch(ctx, pod, patch)
}

// Wipe deletes the member's volume claim and pod: the StatefulSet makes both again, the
// pod behind its gate. A stranded pod is deleted at once, without its kubelet's word: the
// member it ran is no longer in etcd's list, so it cannot rejoin if its node comes back,
// and its claim goes only once no pod uses it.
func (s *statefulSetRunner) Wipe(ctx context.Context, ordinal int) error {
	pvc := &corev1.PersistentVolumeClaim{}
	pvc.Name, pvc.Namespace = claimName(s.c, ordinal), s.c.Namespace
	ctrl.LoggerFrom(ctx).Info("Deleting the volume of a member etcd no longer lists", "persistentVolumeClaim", pvc.Name)
	if err := s.r.Delete(ctx, pvc); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting volume claim %s: %w", pvc.Name, err)
	}
	pod := &corev1.Pod{}
	if err := s.r.Get(ctx, s.key(podName(s.c, ordinal)), pod); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !stranded(pod, time.Now()) {
		return s.deletePod(ctx, ordinal)
	}
	ctrl.LoggerFrom(ctx).Info("Deleting the pod of a member etcd no longer lists without waiting for its node, which has not confirmed its deletion",
		"pod", pod.Name, "node", pod.Spec.NodeName)
	if err := s.r.Delete(ctx, pod, client.GracePeriodSeconds(0), client.Preconditions{UID: &pod.UID}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting pod %s: %w", pod.Name, err)
	}
	return nil
}

// Restart deletes the member's pod: the StatefulSet makes it again from the current
// template, behind its gate, on the same volume.
func (s *statefulSetRunner) Restart(ctx context.Context, ordinal int) error {
	ctrl.LoggerFrom(ctx).Info("Restarting member onto the current spec", "pod", podName(s.c, ordinal))
	return s.deletePod(ctx, ordinal)
}

func (s *statefulSetRunner) deletePod(ctx context.Context, ordinal int) error {
	p := &corev1.Pod{}
	p.Name, p.Namespace = podName(s.c, ordinal), s.c.Namespace
	if err := s.r.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting pod %s: %w", p.Name, err)
	}
	return nil
}

// RecordData writes the member's ID on its volume claim, and makes the EtcdCluster the
// claim's owner: claims outlive the StatefulSet, not the cluster. Only the claim of a pod
// made after it can hold what that pod's member wrote.
func (s *statefulSetRunner) RecordData(ctx context.Context, ordinal int, id uint64) error {
	pod, pvc := &corev1.Pod{}, &corev1.PersistentVolumeClaim{}
	if err := s.r.Get(ctx, s.key(podName(s.c, ordinal)), pod); err != nil {
		return client.IgnoreNotFound(err)
	}
	if err := s.r.Get(ctx, s.key(claimName(s.c, ordinal)), pvc); err != nil {
		return client.IgnoreNotFound(err)
	}
	if gated(pod) || pvc.DeletionTimestamp != nil || pod.CreationTimestamp.Before(&pvc.CreationTimestamp) || s.earlier(pvc) {
		return nil
	}
	patch := client.MergeFromWithOptions(pvc.DeepCopy(), client.MergeFromWithOptimisticLock{})
	metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, v1beta2.MemberIDAnnotation, strconv.FormatUint(id, 16))
	if !slices.ContainsFunc(pvc.OwnerReferences, func(ref metav1.OwnerReference) bool { return ref.UID == s.c.UID }) {
		pvc.OwnerReferences = append(pvc.OwnerReferences, *metav1.NewControllerRef(s.c, v1beta2.GroupVersion.WithKind("EtcdCluster")))
		pvc.OwnerReferences[len(pvc.OwnerReferences)-1].Controller = nil
	}
	ctrl.LoggerFrom(ctx).Info("Recording the member whose data a volume holds", "persistentVolumeClaim", pvc.Name, "member", strconv.FormatUint(id, 16))
	return s.r.Patch(ctx, pvc, patch)
}
