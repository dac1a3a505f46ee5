package pods

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

func TestTrimInCacheKeepsWhatTheOperatorReadsAndStillStripsManagedFields(t *testing.T) {
	o := &ctrl.Options{Cache: cache.Options{DefaultTransform: cache.TransformStripManagedFields()}}
	TrimInCache(func(p *corev1.Pod) { p.Spec = corev1.PodSpec{NodeName: p.Spec.NodeName} })(o)
	meta := metav1.ObjectMeta{Name: "p", Labels: map[string]string{"app": "a"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}
	pod := &corev1.Pod{ObjectMeta: meta,
		Spec:   corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "c", Image: "i"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	got, err := o.Cache.DefaultTransform(pod)
	if err != nil {
		t.Fatal(err)
	}
	cached := got.(*corev1.Pod)
	if cached.Spec.NodeName != "n" || cached.Spec.Containers != nil {
		t.Errorf("spec in the cache = %+v, want only nodeName n", cached.Spec)
	}
	if !Ready(cached) || cached.Status.Phase != corev1.PodRunning || cached.Labels["app"] != "a" {
		t.Errorf("the status and labels are kept: %+v, %v", cached.Status, cached.Labels)
	}
	if cached.ManagedFields != nil {
		t.Errorf("managedFields = %v, want them stripped by the manager's own transform", cached.ManagedFields)
	}

	service := &corev1.Service{ObjectMeta: *meta.DeepCopy()}
	if _, err := o.Cache.DefaultTransform(service); err != nil || service.ManagedFields != nil {
		t.Errorf("another kind goes to the manager's transform alone: managedFields %v, %v", service.ManagedFields, err)
	}
}
