package status

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientevents "k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/internal/testkind"
	"github.com/quintet-operators/quintet/shared/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.MainEnv(m, testenv.Options{
		CRDDirectoryPaths: []string{testkind.CRDDir}, AddToScheme: []func(*runtime.Scheme) error{testkind.AddToScheme},
	}, func(e *testenv.Env) { env = e }))
}

// patchCounter counts status patches that reach the API server.
type patchCounter struct {
	client.Client
	n atomic.Int32
}

func (c *patchCounter) Status() client.SubResourceWriter {
	return &countingStatus{SubResourceWriter: c.Client.Status(), n: &c.n}
}

type countingStatus struct {
	client.SubResourceWriter
	n *atomic.Int32
}

func (s *countingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	s.n.Add(1)
	return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

func newDeployment(t *testing.T) *appsv1.Deployment {
	t.Helper()
	labels := map[string]string{"app": "x"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "patcher-", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
			},
		},
	}
	if err := env.Client.Create(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	return d
}

// onServer is d as the API server has it now.
func onServer(t *testing.T, d *appsv1.Deployment) *appsv1.Deployment {
	t.Helper()
	got := &appsv1.Deployment{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(d), got); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestPatchWritesAChangedStatusOnce(t *testing.T) {
	ctx := context.Background()
	c := &patchCounter{Client: env.Client}
	d := newDeployment(t)
	p := NewPatcher(d)
	d.Status.ObservedGeneration = 42
	d.Status.Replicas = 1
	if err := p.Patch(ctx, c, d); err != nil {
		t.Fatal(err)
	}
	if c.n.Load() != 1 {
		t.Fatalf("%d status patches, want 1", c.n.Load())
	}
	got := onServer(t, d)
	if got.Status.ObservedGeneration != 42 || got.Status.Replicas != 1 {
		t.Fatalf("status on the server = %+v", got.Status)
	}
}

func TestPatchMakesNoRequestWhenStatusIsUnchanged(t *testing.T) {
	ctx := context.Background()
	c := &patchCounter{Client: env.Client}
	d := newDeployment(t)
	p := NewPatcher(d)
	d.Labels = map[string]string{"only": "metadata"} // not status: not written by the patcher
	if err := p.Patch(ctx, c, d); err != nil {
		t.Fatal(err)
	}
	if c.n.Load() != 0 {
		t.Fatalf("%d status patches for an unchanged status, want 0", c.n.Load())
	}
}

func TestPatchIgnoresAnObjectDeletedMeanwhile(t *testing.T) {
	ctx := context.Background()
	d := newDeployment(t)
	p := NewPatcher(d)
	if err := env.Client.Delete(ctx, d); err != nil {
		t.Fatal(err)
	}
	d.Status.ObservedGeneration = 7
	if err := p.Patch(ctx, env.Client, d); err != nil {
		t.Fatalf("patching a deleted object's status: %v", err)
	}
}

// A pass that read its object before the last write of its status (the cache had not seen it
// yet) computes a status from what it read. Merged, the fields it left as it read them keep
// the values of that write: the pass writes what it computed (a record of what it did is not
// lost), and runs again soon to compute the rest from the object as it now is.
func TestAStatusWrittenFromAStaleReadIsComputedAgainSoon(t *testing.T) {
	ctx := context.Background()
	d := newDeployment(t)
	stale := d.DeepCopy()
	first := NewPatcher(d)
	d.Status.ObservedGeneration, d.Status.Replicas = 1, 3
	if err := first.Patch(ctx, env.Client, d); err != nil {
		t.Fatal(err)
	}
	second := NewPatcher(stale)
	stale.Status.ObservedGeneration = 2 // Replicas as it read it, 0: not in the merge patch
	res, err := second.Finish(ctx, env.Client, stale, reconcile.Result{RequeueAfter: time.Hour}, nil)
	if err != nil || res.RequeueAfter != staleReadRetry {
		t.Fatalf("Finish = %+v, %v; want a requeue after %v and no error", res, err, staleReadRetry)
	}
	got := onServer(t, d)
	if got.Status.ObservedGeneration != 2 {
		t.Fatalf("status on the server = %+v, want what the second pass computed written", got.Status)
	}
}

// A pass that writes its object itself (a finalizer) has the resourceVersion that write
// returned: its status is its own read, and is written.
func TestAPassThatWroteItsObjectWritesItsStatus(t *testing.T) {
	ctx := context.Background()
	d := newDeployment(t)
	p := NewPatcher(d)
	before := d.DeepCopy()
	d.Labels = map[string]string{"written": "by-the-pass"}
	if err := env.Client.Patch(ctx, d, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	d.Status.Replicas = 2
	res, err := p.Finish(ctx, env.Client, d, reconcile.Result{RequeueAfter: time.Minute}, nil)
	if err != nil || res.RequeueAfter != time.Minute {
		t.Fatalf("Finish = %+v, %v; want the pass's own result", res, err)
	}
	got := onServer(t, d)
	if got.Status.Replicas != 2 {
		t.Fatalf("status on the server = %+v", got.Status)
	}
}

func TestPatchRecordsEachTransitionOfTheConditionsItIsGivenOnce(t *testing.T) {
	ctx := context.Background()
	w := &testkind.Widget{ObjectMeta: metav1.ObjectMeta{GenerateName: "events-", Namespace: "default"}}
	if err := env.Client.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	events := clientevents.NewFakeRecorder(10)
	var transitions conditions.Transitions
	// pass reads the Widget, sets its conditions, and patches them, as a reconcile does.
	pass := func(degraded metav1.ConditionStatus, reason string) {
		t.Helper()
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			t.Fatal(err)
		}
		p := NewPatcher(w, WithEvents(events, &transitions, conditions.DegradedCondition))
		conditions.Set(w, conditions.DegradedCondition, degraded, reason, reason+" message")
		conditions.Set(w, conditions.ProgressingCondition, degraded, reason, "not reported: not given to WithEvents")
		if err := p.Patch(ctx, env.Client, w); err != nil {
			t.Fatal(err)
		}
	}
	pass(metav1.ConditionFalse, conditions.ReasonAsExpected)
	pass(metav1.ConditionTrue, conditions.ReasonPodsFailing)
	pass(metav1.ConditionTrue, conditions.ReasonPodsFailing)
	pass(metav1.ConditionFalse, conditions.ReasonAsExpected)
	pass(metav1.ConditionFalse, conditions.ReasonAsExpected)
	var got []string
	for len(events.Events) > 0 {
		got = append(got, <-events.Events)
	}
	want := []string{"Warning PodsFailing PodsFailing message", "Normal AsExpected AsExpected message"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	if c := conditions.Get(w, conditions.DegradedCondition); c == nil || c.Reason != conditions.ReasonAsExpected {
		t.Fatalf("the status was written: %+v", w.Status)
	}
}
