package ensure

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// deployment is the Deployment w with one container of image.
func deployment(ns, image string) *appsv1.Deployment {
	labels := map[string]string{"app": "w"}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}}}}
}

// holds checks the Deployment's image and that it says it holds the spec of desiredImage.
func holds(f *writeFixture[*appsv1.Deployment], image, desiredImage string) {
	f.t.Helper()
	if d := f.server(); d.Spec.Template.Spec.Containers[0].Image != image || !asAppliedFor(d, deployment(f.key.Namespace, desiredImage)) {
		f.t.Errorf("image %q, annotation %q at generation %d: want %s, as applied", d.Spec.Template.Spec.Containers[0].Image,
			d.Annotations[AppliedSpecAnnotation], d.Generation, image)
	}
}

// A manager whose cache holds Deployments without their pod templates: Ensure neither reads
// nor writes a Deployment left as it wrote it, reads it whole and puts back what the operator
// manages when someone changed that, and records (without an update) a change of what it does
// not manage.
func TestEnsureComparesAWorkloadWholeOnlyWhenItsSpecMayHaveChanged(t *testing.T) {
	newDeployment := func() *appsv1.Deployment { return &appsv1.Deployment{} }
	f := newWriteFixture(t, SpecsOutOfCache, newDeployment, func() client.Object { return newDeployment() })
	desired := func(image string) *appsv1.Deployment { return deployment(f.key.Namespace, image) }

	if err := f.w.Ensure(f.ctx, f.owner, desired("a")); err != nil {
		t.Fatal(err)
	}
	if reads, writes := f.ensure(desired("a")); reads != 0 || writes != 0 {
		t.Errorf("as written: %d reads past the cache and %d writes, want none", reads, writes)
	}
	cached := &appsv1.Deployment{}
	if err := f.mgr.GetClient().Get(f.ctx, f.key, cached); err != nil || len(cached.Spec.Template.Spec.Containers) != 0 {
		t.Errorf("the cache holds the template %+v (%v), want none", cached.Spec.Template, err)
	}

	f.byHand(func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "by-hand" })
	if reads, writes := f.ensure(desired("a")); reads != 1 || writes != 1 {
		t.Errorf("after a change by hand of a managed field: %d reads and %d writes, want 1 and 1", reads, writes)
	}
	holds(f, "a", "a")
	if reads, writes := f.ensure(desired("a")); reads != 0 || writes != 0 {
		t.Errorf("after the operator's update: %d reads and %d writes, want none", reads, writes)
	}

	f.byHand(func(d *appsv1.Deployment) { d.Spec.Template.Annotations = map[string]string{"restartedAt": "now"} })
	if reads, writes := f.ensure(desired("a")); reads != 1 || writes != 1 {
		t.Errorf("after a change by hand of what the operator does not manage: %d reads and %d writes, want 1 and 1", reads, writes)
	}
	// A Deployment's annotations are its ReplicaSets': writing one moves its generation.
	if d := f.server(); d.Spec.Template.Annotations["restartedAt"] != "now" || d.Generation != 5 {
		t.Errorf("generation %d, template annotations %v: want the change kept and recorded at 5", d.Generation, d.Spec.Template.Annotations)
	}
	holds(f, "a", "a")
	if reads, writes := f.ensure(desired("a")); reads != 0 || writes != 0 {
		t.Errorf("once recorded: %d reads and %d writes, want none", reads, writes)
	}

	if reads, writes := f.ensure(desired("b")); reads != 1 || writes != 1 {
		t.Errorf("a new spec: %d reads and %d writes, want 1 and 1", reads, writes)
	}
	holds(f, "b", "b")
}

// asAppliedFor: obj says it holds desired's spec.
func asAppliedFor(obj, desired client.Object) bool {
	hash, err := specHash(desired)
	return err == nil && hash != "" && asApplied(obj, hash)
}
