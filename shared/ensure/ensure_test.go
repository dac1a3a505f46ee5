package ensure

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientevents "k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/shared/internal/testkind"
	"github.com/quintet-operators/quintet/shared/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.MainEnv(m, testenv.Options{
		CRDDirectoryPaths: []string{testkind.CRDDir}, AddToScheme: []func(*runtime.Scheme) error{testkind.AddToScheme},
	}, func(e *testenv.Env) { env = e }))
}

// widgetWriter is a Widget made in a new namespace, and a Writer that records its Events.
func widgetWriter(t *testing.T, namespace string) (*testkind.Widget, Writer, *clientevents.FakeRecorder) {
	ns := env.NewNamespace(t, namespace)
	owner := &testkind.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns}}
	if err := env.Client.Create(context.Background(), owner); err != nil {
		t.Fatal(err)
	}
	events := clientevents.NewFakeRecorder(10)
	return owner, Writer{Client: env.Client, Recorder: events}, events
}

// serviceOn is a Service with one port, every number set, as the operators do: unset numbers
// count as a change.
func serviceOn(ns, name string, port int32) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: port, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP}}},
	}
}

func TestEnsureRecordsAnEventOnTheOwnerForEachWriteOnly(t *testing.T) {
	ctx := context.Background()
	owner, w, events := widgetWriter(t, "ensure")
	ns := owner.Namespace
	service := func(port int32) *corev1.Service { return serviceOn(ns, "w", port) }
	for _, port := range []int32{80, 80, 8080, 8080} {
		if err := w.Ensure(ctx, owner, service(port)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for len(events.Events) > 0 {
		got = append(got, <-events.Events)
	}
	want := []string{"Normal Created Created Service w", "Normal Updated Updated Service w"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %q, want %q", got, want)
	}

	// An object of someone else's is refused, and nothing is recorded.
	theirs := &testkind.Widget{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: ns}}
	if err := env.Client.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	if _, notOwned := IsNotOwned(w.Ensure(ctx, theirs, service(80))); !notOwned || len(events.Events) != 0 {
		t.Fatalf("a Service controlled by another Widget: not owned %v, events %d", notOwned, len(events.Events))
	}
}

// A pass that collects its writes (WithChangeSet) records one Event per reason when it ends,
// naming every object in the order written; a pass that wrote nothing records none.
func TestAPassRecordsOneEventPerReasonOfWhatItWrote(t *testing.T) {
	ctx := context.Background()
	owner, w, events := widgetWriter(t, "ensure-changes")
	service := func(name string, port int32) *corev1.Service { return serviceOn(owner.Namespace, name, port) }
	pass := func(services ...*corev1.Service) []string {
		passCtx, changes := WithChangeSet(ctx)
		for _, s := range services {
			if err := w.Ensure(passCtx, owner, s); err != nil {
				t.Fatal(err)
			}
		}
		if len(events.Events) != 0 {
			t.Fatalf("%d Events recorded before the pass ended", len(events.Events))
		}
		changes.Record(events, owner)
		var got []string
		for len(events.Events) > 0 {
			got = append(got, <-events.Events)
		}
		return got
	}
	if got, want := pass(service("a", 80), service("b", 80)), []string{"Normal Created Created Service a, Service b"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("first pass: events %q, want %q", got, want)
	}
	got, want := pass(service("a", 8080), service("b", 80), service("c", 80)), []string{"Normal Created Created Service c", "Normal Updated Updated Service a"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("second pass: events %q, want %q", got, want)
	}
	if got := pass(service("a", 8080), service("b", 80), service("c", 80)); len(got) != 0 {
		t.Fatalf("a pass that wrote nothing: events %q", got)
	}
}

// An Event's note holds at most 1 kB: a change set too long for it says how many objects it
// leaves out.
func TestAChangeNoteTooLongForAnEventSaysHowManyItLeavesOut(t *testing.T) {
	objs := make([]written, 100)
	for i := range objs {
		objs[i] = written{kind: "Service", obj: &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("a-rather-long-name-%03d", i)}}}
	}
	note := changeNote(EventCreated, objs)
	listed := strings.Count(note, "Service ")
	if len(note) > maxEventNote || !strings.HasSuffix(note, fmt.Sprintf(" and %d more", 100-listed)) || listed == 0 {
		t.Fatalf("%d bytes, %d of 100 listed: %q", len(note), listed, note)
	}
	if note := changeNote(EventCreated, objs[:2]); note != "Created Service a-rather-long-name-000, Service a-rather-long-name-001" {
		t.Fatalf("two objects: %q", note)
	}
}

// A namespace being deleted refuses what a pass would create: the pass ends without an error
// to retry, as the namespace's deletion takes the owner too.
func TestResultOfAPassInANamespaceBeingDeletedIsNoRetry(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "ensure-deleted")
	owner := &testkind.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns}}
	if err := env.Client.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	// envtest runs no namespace controller: the namespace stays Terminating.
	if err := env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	err := Writer{Client: env.Client}.Ensure(ctx, owner, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(80), Protocol: corev1.ProtocolTCP}}}})
	if !IsNamespaceTerminating(err) {
		t.Fatalf("creating in a namespace being deleted: %v", err)
	}
	if result, rerr := ResultOf(fmt.Errorf("a pass: %w", err)); rerr != nil || !result.IsZero() {
		t.Errorf("ResultOf(%v) = %+v, %v: want no retry", err, result, rerr)
	}
	if _, rerr := ResultOf(fmt.Errorf("other")); rerr == nil {
		t.Error("any other error is retried")
	}
}

// A manager behind its watches still has an owner whose namespace is gone: a create there is
// not found for the namespace, and the pass ends without a retry too. Another object not found
// is no such thing.
func TestResultOfAPassInANamespaceAlreadyGoneIsNoRetry(t *testing.T) {
	ctx := context.Background()
	owner := &testkind.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ensure-gone", UID: "a-widget-in-a-cache"}}
	err := Writer{Client: env.Client}.Ensure(ctx, owner, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ensure-gone"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(80), Protocol: corev1.ProtocolTCP}}}})
	if !IsNamespaceTerminating(err) {
		t.Fatalf("creating in a namespace that is gone: %v", err)
	}
	if result, rerr := ResultOf(fmt.Errorf("a pass: %w", err)); rerr != nil || !result.IsZero() {
		t.Errorf("ResultOf(%v) = %+v, %v: want no retry", err, result, rerr)
	}
	missing := env.Client.Get(ctx, client.ObjectKey{Namespace: env.NewNamespace(t, "ensure-here"), Name: "missing"}, &corev1.Service{})
	if !apierrors.IsNotFound(missing) || IsNamespaceTerminating(missing) {
		t.Errorf("a Service not found (%v) is not a namespace gone", missing)
	}
}
