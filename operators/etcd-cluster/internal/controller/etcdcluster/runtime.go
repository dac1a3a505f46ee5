package etcdcluster

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
)

// lostAfter is how long a member's pod may stay unready before the member counts as lost
// and is replaced with empty data (its volume is gone, or its data no longer starts).
const lostAfter = 2 * time.Minute

// statefulSetRuntime runs members as the pods of the cluster's StatefulSet: the
// membership.Runtime of a real cluster.
type statefulSetRuntime struct {
	r       *Reconciler
	c       *v1beta2.EtcdCluster
	version string // the image version members start with
}

func (s *statefulSetRuntime) key(name string) client.ObjectKey {
	return client.ObjectKey{Namespace: s.c.Namespace, Name: name}
}

func (s *statefulSetRuntime) Workloads(ctx context.Context) (int, error) {
	sts := &appsv1.StatefulSet{}
	if err := s.r.Get(ctx, s.key(s.c.Name), sts); err != nil {
		return 0, client.IgnoreNotFound(err)
	}
	if sts.Spec.Replicas == nil {
		return 1, nil
	}
	return int(*sts.Spec.Replicas), nil
}

func (s *statefulSetRuntime) Start(ctx context.Context, ordinal int, initialCluster, state string) error {
	if err := s.r.ensure(ctx, s.c, memberConfigMap(s.c, initialCluster, state)); err != nil {
		return err
	}
	return s.r.ensure(ctx, s.c, statefulSet(s.c, int32(ordinal+1), s.version, s.r.ProxyEnv)) //nolint:gosec // ordinal < 9
}

func (s *statefulSetRuntime) Stop(ctx context.Context, ordinal int) error {
	// The StatefulSet deletes the volume of the removed pod (retention policy WhenScaled).
	return s.r.ensure(ctx, s.c, statefulSet(s.c, int32(ordinal), s.version, s.r.ProxyEnv)) //nolint:gosec // ordinal < 9
}

func (s *statefulSetRuntime) Wipe(ctx context.Context, ordinal int, initialCluster string) error {
	if err := s.r.ensure(ctx, s.c, memberConfigMap(s.c, initialCluster, "existing")); err != nil {
		return err
	}
	pod := fmt.Sprintf("%s-%d", s.c.Name, ordinal)
	pvc := &corev1.PersistentVolumeClaim{}
	pvc.Name, pvc.Namespace = "data-"+pod, s.c.Namespace
	ctrl.LoggerFrom(ctx).Info("Deleting the pod and volume of a lost member", "pod", pod, "persistentVolumeClaim", pvc.Name)
	if err := s.r.Delete(ctx, pvc); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting the volume of %s: %w", pod, err)
	}
	p := &corev1.Pod{}
	p.Name, p.Namespace = pod, s.c.Namespace
	if err := s.r.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting pod %s: %w", pod, err)
	}
	return nil
}

// Lost: the member's volume is gone, or its pod has been unready for lostAfter.
func (s *statefulSetRuntime) Lost(ctx context.Context, ordinal int) (bool, error) {
	pod := fmt.Sprintf("%s-%d", s.c.Name, ordinal)
	pvc := &corev1.PersistentVolumeClaim{}
	if err := s.r.Get(ctx, s.key("data-"+pod), pvc); apierrors.IsNotFound(err) || (err == nil && pvc.DeletionTimestamp != nil) {
		return true, nil
	} else if err != nil {
		return false, err
	}
	p := &corev1.Pod{}
	if err := s.r.Get(ctx, s.key(pod), p); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionFalse {
			return time.Since(cond.LastTransitionTime.Time) > lostAfter, nil
		}
	}
	return false, nil
}
