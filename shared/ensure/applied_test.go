package ensure

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/shared/internal/testkind"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// countingReader counts the reads past the cache.
type countingReader struct {
	client.Reader
	reads int
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.reads++
	return r.Reader.Get(ctx, key, obj, opts...)
}

// appliedFixture runs Ensure on a Deployment through a manager whose cache holds Deployments
// without their pod templates, counting the reads past the cache and the writes.
type appliedFixture struct {
	t      *testing.T
	ctx    context.Context
	mgr    *testenv.Manager
	reader *countingReader
	w      Writer
	owner  *testkind.Widget
	key    client.ObjectKey
}

func (f *appliedFixture) deployment(image string) *appsv1.Deployment {
	labels := map[string]string{"app": "w"}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: f.key.Name, Namespace: f.key.Namespace},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}}}}
}

// ensure runs Ensure once the cache saw generation, and returns the reads and writes it made.
func (f *appliedFixture) ensure(desired *appsv1.Deployment, generation int64) (reads int, writes int64) {
	f.t.Helper()
	cached := &appsv1.Deployment{}
	deadline := time.Now().Add(30 * time.Second)
	for f.mgr.GetClient().Get(f.ctx, f.key, cached) != nil || cached.Generation != generation {
		if time.Now().After(deadline) {
			f.t.Fatalf("the cache never saw generation %d (has %d)", generation, cached.Generation)
		}
		time.Sleep(10 * time.Millisecond)
	}
	reads, writes = f.reader.reads, f.mgr.Writes.WritesIn(f.key.Namespace)
	if err := f.w.Ensure(f.ctx, f.owner, desired); err != nil {
		f.t.Fatal(err)
	}
	return f.reader.reads - reads, f.mgr.Writes.WritesIn(f.key.Namespace) - writes
}

// server is the Deployment as the API server holds it.
func (f *appliedFixture) server() *appsv1.Deployment {
	f.t.Helper()
	d := &appsv1.Deployment{}
	if err := env.Client.Get(f.ctx, f.key, d); err != nil {
		f.t.Fatal(err)
	}
	return d
}

// byHand changes the Deployment as a user would.
func (f *appliedFixture) byHand(change func(*appsv1.Deployment)) {
	f.t.Helper()
	d := f.server()
	change(d)
	if err := env.Client.Update(f.ctx, d); err != nil {
		f.t.Fatal(err)
	}
}

// holds checks the Deployment's image and that it says it holds the spec of desiredImage.
func (f *appliedFixture) holds(image, desiredImage string) {
	f.t.Helper()
	if d := f.server(); d.Spec.Template.Spec.Containers[0].Image != image || !asAppliedFor(d, f.deployment(desiredImage)) {
		f.t.Errorf("image %q, annotation %q at generation %d: want %s, as applied", d.Spec.Template.Spec.Containers[0].Image,
			d.Annotations[AppliedSpecAnnotation], d.Generation, image)
	}
}

// A manager whose cache holds Deployments without their pod templates: Ensure neither reads
// nor writes a Deployment left as it wrote it, reads it whole and puts back what the operator
// manages when someone changed that, and records (without an update) a change of what it does
// not manage.
func TestEnsureComparesAWorkloadWholeOnlyWhenItsSpecMayHaveChanged(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ns := env.NewNamespace(t, "ensure-applied")
	mgr, err := env.NewManager(testenv.ManagerOptions{Customize: func(o *ctrl.Options) {
		o.Cache.DefaultTransform = cache.TransformStripManagedFields()
		SpecsOutOfCache(o)
	}})
	if err != nil {
		t.Fatal(err)
	}
	wait := mgr.Run(ctx)
	defer func() {
		cancel()
		_ = wait()
	}()
	owner := &testkind.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns}}
	if err := env.Client.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	reader := &countingReader{Reader: mgr.GetAPIReader()}
	f := &appliedFixture{t: t, ctx: ctx, mgr: mgr, reader: reader, w: Writer{Client: mgr.Writes, APIReader: reader},
		owner: owner, key: client.ObjectKey{Namespace: ns, Name: "w"}}

	if err := f.w.Ensure(ctx, owner, f.deployment("a")); err != nil {
		t.Fatal(err)
	}
	if reads, writes := f.ensure(f.deployment("a"), 1); reads != 0 || writes != 0 {
		t.Errorf("as written: %d reads past the cache and %d writes, want none", reads, writes)
	}
	cached := &appsv1.Deployment{}
	if err := mgr.GetClient().Get(ctx, f.key, cached); err != nil || len(cached.Spec.Template.Spec.Containers) != 0 {
		t.Errorf("the cache holds the template %+v (%v), want none", cached.Spec.Template, err)
	}

	f.byHand(func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "by-hand" })
	if reads, writes := f.ensure(f.deployment("a"), 2); reads != 1 || writes != 1 {
		t.Errorf("after a change by hand of a managed field: %d reads and %d writes, want 1 and 1", reads, writes)
	}
	f.holds("a", "a")
	if reads, writes := f.ensure(f.deployment("a"), 3); reads != 0 || writes != 0 {
		t.Errorf("after the operator's update: %d reads and %d writes, want none", reads, writes)
	}

	f.byHand(func(d *appsv1.Deployment) { d.Spec.Template.Annotations = map[string]string{"restartedAt": "now"} })
	if reads, writes := f.ensure(f.deployment("a"), 4); reads != 1 || writes != 1 {
		t.Errorf("after a change by hand of what the operator does not manage: %d reads and %d writes, want 1 and 1", reads, writes)
	}
	// A Deployment's annotations are its ReplicaSets': writing one moves its generation.
	if d := f.server(); d.Spec.Template.Annotations["restartedAt"] != "now" || d.Generation != 5 {
		t.Errorf("generation %d, template annotations %v: want the change kept and recorded at 5", d.Generation, d.Spec.Template.Annotations)
	}
	f.holds("a", "a")
	if reads, writes := f.ensure(f.deployment("a"), 5); reads != 0 || writes != 0 {
		t.Errorf("once recorded: %d reads and %d writes, want none", reads, writes)
	}

	if reads, writes := f.ensure(f.deployment("b"), 5); reads != 1 || writes != 1 {
		t.Errorf("a new spec: %d reads and %d writes, want 1 and 1", reads, writes)
	}
	f.holds("b", "b")
}

// asAppliedFor: obj says it holds desired's spec.
func asAppliedFor(obj, desired client.Object) bool {
	hash, err := specHash(desired)
	return err == nil && hash != "" && asApplied(obj, hash)
}
