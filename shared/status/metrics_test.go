package status

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/shared/internal/testkind"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// The conditions of every object in the manager's cache are exported, 1 on the current status
// and 0 on the two others, except those of objects it does not manage; a condition the object
// lost, an object gone and a manager stopped leave no series.
func TestExportConditionsSaysWhatTheCacheHolds(t *testing.T) {
	const kind = exportedKind
	ctx := context.Background()
	ns := env.NewNamespace(t, "conditions")
	mine := newWidget(t, ns, "mine", metav1.ConditionFalse, metav1.ConditionTrue)
	newWidget(t, ns, "others", metav1.ConditionTrue, metav1.ConditionFalse)
	stop := runExporter(t, kind, func(o client.Object) bool { return o.GetName() != "others" }, nil)

	waitForSeries(t, "mine Ready/False=1", "mine Ready/True=0", "mine Ready/Unknown=0",
		"mine Degraded/False=0", "mine Degraded/True=1", "mine Degraded/Unknown=0")

	mine.Status.Conditions = mine.Status.Conditions[:1] // Degraded is gone
	if err := env.Client.Status().Update(ctx, mine); err != nil {
		t.Fatal(err)
	}
	waitForSeries(t, "mine Ready/False=1", "mine Ready/True=0", "mine Ready/Unknown=0")

	if err := env.Client.Delete(ctx, mine); err != nil {
		t.Fatal(err)
	}
	waitForSeries(t)

	newWidget(t, ns, "later", metav1.ConditionTrue, metav1.ConditionFalse)
	waitForSeries(t, "later Ready/True=1", "later Ready/False=0", "later Ready/Unknown=0",
		"later Degraded/True=0", "later Degraded/False=1", "later Degraded/Unknown=0")
	stop()
	waitForSeries(t)
}

// A manager that does not lead (a standby replica) exports nothing: each object has the
// series of one replica.
func TestExportConditionsWaitsForLeadership(t *testing.T) {
	const kind = "StandbyWidget"
	ctx := context.Background()
	ns := env.NewNamespace(t, "standby")
	newWidget(t, ns, "w", metav1.ConditionTrue, metav1.ConditionFalse)
	// The lease is another replica's, renewed a moment ago, for an hour.
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "standby-test", Namespace: ns},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("the-leader"), LeaseDurationSeconds: ptr.To[int32](3600),
			RenewTime: &metav1.MicroTime{Time: time.Now()}, AcquireTime: &metav1.MicroTime{Time: time.Now()}}}
	if err := env.Client.Create(ctx, lease); err != nil {
		t.Fatal(err)
	}
	runExporter(t, kind, nil, func(o *ctrl.Options) {
		o.LeaderElection, o.LeaderElectionID, o.LeaderElectionNamespace = true, lease.Name, ns
	})
	// The same manager would export w within this time were it the leader (the test above).
	time.Sleep(3 * time.Second)
	if got := seriesOf(t, kind); len(got) != 0 {
		t.Fatalf("a standby exports %q", got)
	}
}

// newWidget makes a Widget with Ready and Degraded of the statuses given.
func newWidget(t *testing.T, ns, name string, ready, degraded metav1.ConditionStatus) *testkind.Widget {
	t.Helper()
	ctx := context.Background()
	w := &testkind.Widget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if err := env.Client.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	w.Status.Conditions = []metav1.Condition{
		{Type: "Ready", Status: ready, Reason: "Testing", LastTransitionTime: metav1.Now()},
		{Type: "Degraded", Status: degraded, Reason: "Testing", LastTransitionTime: metav1.Now()},
	}
	if err := env.Client.Status().Update(ctx, w); err != nil {
		t.Fatal(err)
	}
	return w
}

// runExporter runs a manager (its options changed by customize, if given) that exports kind's
// conditions; stop stops it (the test's clean-up does too).
func runExporter(t *testing.T, kind string, manages func(client.Object) bool, customize func(*ctrl.Options)) (stop func()) {
	t.Helper()
	mgr, err := env.NewManager(testenv.ManagerOptions{Customize: customize})
	if err != nil {
		t.Fatal(err)
	}
	if err := ExportConditions(mgr, kind, &testkind.WidgetList{}, manages); err != nil {
		t.Fatal(err)
	}
	return mgr.RunForTest(t)
}

// exportedKind is the kind the exporter test exports its Widgets as.
const exportedKind = "MetricsWidget"

// waitForSeries waits until exportedKind's series are want, each "name type/status=value".
func waitForSeries(t *testing.T, want ...string) {
	t.Helper()
	slices.Sort(want)
	var got []string
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) {
			got = seriesOf(t, exportedKind)
			return slices.Equal(got, want), nil
		})
	if err != nil {
		t.Fatalf("series %q, want %q", got, want)
	}
}

// seriesOf lists the condition series of kind, each "name type/status=value", sorted.
func seriesOf(t *testing.T, kind string) []string {
	t.Helper()
	series, err := testenv.Series("quintet_resource_condition", map[string]string{"kind": kind})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(series))
	for _, s := range series {
		out = append(out, fmt.Sprintf("%s %s/%s=%v", s.Labels["name"], s.Labels["type"], s.Labels["status"], s.Value))
	}
	slices.Sort(out)
	return out
}
