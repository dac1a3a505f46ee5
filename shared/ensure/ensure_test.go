package ensure

import (
	"context"
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientevents "k8s.io/client-go/tools/events"

	"github.com/quintet-operators/quintet/shared/internal/testkind"
	"github.com/quintet-operators/quintet/shared/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.MainEnv(m, testenv.Options{
		CRDDirectoryPaths: []string{testkind.CRDDir}, AddToScheme: []func(*runtime.Scheme) error{testkind.AddToScheme},
	}, func(e *testenv.Env) { env = e }))
}

func TestEnsureRecordsAnEventOnTheOwnerForEachWriteOnly(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "ensure")
	owner := &testkind.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns}}
	if err := env.Client.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	events := clientevents.NewFakeRecorder(10)
	w := Writer{Client: env.Client, Recorder: events}
	service := func(port int32) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns},
			// Every number set, as the operators do: unset numbers count as a change.
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: port, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP}}},
		}
	}
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
	if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		t.Fatalf("creating in a namespace being deleted: %v", err)
	}
	if result, rerr := ResultOf(fmt.Errorf("a pass: %w", err)); rerr != nil || !result.IsZero() {
		t.Errorf("ResultOf(%v) = %+v, %v: want no retry", err, result, rerr)
	}
	if _, rerr := ResultOf(fmt.Errorf("other")); rerr == nil {
		t.Error("any other error is retried")
	}
}
