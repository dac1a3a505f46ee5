//go:build bench

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// The broken-tenth benchmark's shape: copy i is broken when i%brokenEvery is brokenEvery-1,
// and the target is that the healthy rest settle within brokenTarget times the time
// all copies take when none is broken.
const (
	brokenEvery  = 10
	brokenTarget = 1.2
	// brokenNodePort is the node port minimart's broken copies ask for: a Service of the
	// benchmark holds it first.
	brokenNodePort = 30042
)

// brokenCopy is how an operator's copies are broken: the spec's field set to value, which the
// API server accepts and the operator cannot converge, or the objects inTheWay makes for the
// broken copies (their namespaces and names) before the copies exist; and the reason their
// status then gives, on Degraded (True) and Ready (False) alike.
type brokenCopy struct {
	field    []string
	value    any
	inTheWay func(copies []types.NamespacedName) []client.Object
	reason   string
}

// brokenCopies is each operator's broken copy.
var brokenCopies = map[string]brokenCopy{
	// Static TLS naming Secrets that do not exist. Members that do not answer are every copy's
	// state on kwok; a missing Secret is the spec's fault: reconcileTLS cannot read it, no
	// member starts, and the cluster waits with TLSInvalid.
	"etcd-cluster": {field: []string{"spec", "TLS"}, reason: "TLSInvalid", value: map[string]any{"static": map[string]any{
		"member":         map[string]any{"peerSecret": "etcd-peer-tls", "serverSecret": "etcd-server-tls"},
		"operatorSecret": "etcd-client-tls",
	}}},
	// CPU requests above limits: the CRD lets them through, the pod API refuses every pod
	// (Invalid), a terminal PodCreateFailed.
	"gordon": {field: []string{"spec", "gordon", "resources"}, reason: "PodCreateFailed", value: map[string]any{
		"requests": map[string]any{"cpu": "2"}, "limits": map[string]any{"cpu": "1"},
	}},
	// A Service of someone else's named as the Runtime's NATS client Service, kre-nats, in its
	// namespace: refused with ObjectNotOwned, looked at again every minute. A secretRef to a
	// missing Secret would go unnoticed: the operator never reads a user's Secret, and kwok
	// runs the pods without it.
	"kre-runtime": {reason: "ObjectNotOwned", inTheWay: func(copies []types.NamespacedName) []client.Object {
		namespaces := make([]string, 0, len(copies))
		for _, c := range copies {
			namespaces = append(namespaces, c.Namespace)
		}
		services := make([]client.Object, 0, len(copies))
		for _, ns := range slices.Compact(namespaces) {
			services = append(services, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "kre-nats", Namespace: ns},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 1}}}})
		}
		return services
	}},
	// A chart value Helm cannot install: service.nodePort, which a Service of the benchmark
	// already holds. The release fails ("provided port is already allocated") with
	// ReleaseFailed, and is tried again after a back-off from 10 s doubling to 5 minutes.
	"minimart": {field: []string{"spec", "service"}, reason: "ReleaseFailed",
		value: map[string]any{"type": "NodePort", "nodePort": int64(brokenNodePort)},
		inTheWay: func(copies []types.NamespacedName) []client.Object {
			return []client.Object{&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "bench-node-port-holder", Namespace: copies[0].Namespace},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80, NodePort: brokenNodePort}}}}}
		}},
	// A DaemonSet of someone else's named as the Ptemplate's consumer DaemonSet, its pods on no
	// node: ObjectNotOwned. (A selector that is no node label, the first version of this fault,
	// is refused at admission now.) Only with KMM's Module kind served (serveKMMModules):
	// without it every Ptemplate waits with KMMNotInstalled before its spec is read.
	"ptemplate-device": {reason: "ObjectNotOwned", inTheWay: func(copies []types.NamespacedName) []client.Object {
		daemonSets := make([]client.Object, 0, len(copies))
		match := map[string]string{"bench.quintet.dev/in-the-way": "true"}
		for _, c := range copies {
			daemonSets = append(daemonSets, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: c.Name + "-consumer", Namespace: c.Namespace},
				Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: match}, Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: match},
					Spec:       corev1.PodSpec{NodeSelector: match, Containers: []corev1.Container{{Name: "consumer", Image: "in-the-way:1"}}},
				}}})
		}
		return daemonSets
	}},
}

// brokenRun is one manager's run: healthy copies and broken ones (none in run A).
type brokenRun struct {
	healthy, broken   int
	settled           int           // healthy copies settled (and Ready where kwok allows)
	toSettled         time.Duration // creating the copies until every healthy one settled
	reported          int           // broken copies whose status gives the reason expected
	unreported        string        // what one that does not gives instead
	longestProcessing float64       // the longest any worker held one item, in seconds
}

// brokenPair is an operator's runs: A all healthy, B with a broken tenth, twice each.
type brokenPair struct {
	operator, reason string
	a, b             [2]brokenRun
}

// ratio is the time B took over the time A took, both runs of each summed.
func (p brokenPair) ratio() float64 {
	return (p.b[0].toSettled + p.b[1].toSettled).Seconds() / (p.a[0].toSettled + p.a[1].toSettled).Seconds()
}

// spread is how far apart two runs of one kind are: the longer over the shorter, less one. A
// ratio closer to 1 than the spreads are wide says nothing either way.
func spread(runs [2]brokenRun) float64 {
	long, short := max(runs[0].toSettled, runs[1].toSettled), min(runs[0].toSettled, runs[1].toSettled)
	return long.Seconds()/short.Seconds() - 1
}

// TestBenchScaleBroken measures whether broken objects hold up healthy ones. For each operator
// (BENCH_SCALE_OPERATORS), it creates BENCH_SCALE_BROKEN (1000) copies of its sample at once,
// four times, each on a fresh manager, in the order A, B, B, A: run A all healthy, run B with
// every tenth copy broken as brokenCopies says. It prints the time from creation until every
// healthy copy settled (as TestBenchScale counts them) in each run, the ratio of B's to A's
// (the target: under 1.2), and the longest any worker held one item. It fails only on correctness: a healthy copy that never
// settles, or a broken one whose status does not give the reason expected.
func TestBenchScaleBroken(t *testing.T) {
	ctx := context.Background()
	cfg, c := scaleCluster(t)
	n, err := strconv.Atoi(envOr("BENCH_SCALE_BROKEN", "1000"))
	must(t, err)
	if n < brokenEvery {
		t.Fatalf("BENCH_SCALE_BROKEN is %d: it takes %d copies to have one broken", n, brokenEvery)
	}
	var pairs []brokenPair
	for _, op := range scaleOperators(ctx, t, cfg, c) {
		t.Run(op, func(t *testing.T) {
			breakage, ok := brokenCopies[op]
			if !ok {
				t.Fatalf("brokenCopies does not say how to break a copy of %s", op)
			}
			// A, B, B, A: whatever drifts over the runs (the API server's and the garbage
			// collector's work left by the runs before) weighs on A and B alike.
			p := brokenPair{operator: op, reason: breakage.reason}
			p.a[0] = runBroken(ctx, t, c, op, n, nil)
			p.b[0] = runBroken(ctx, t, c, op, n, &breakage)
			p.b[1] = runBroken(ctx, t, c, op, n, &breakage)
			p.a[1] = runBroken(ctx, t, c, op, n, nil)
			pairs = append(pairs, p)
		})
	}
	printBrokenTable(pairs)
}

// runBroken runs a fresh manager of op with n copies of its sample, broken as breakage says
// when it is not nil, until every healthy copy settled and every broken one reports its
// reason; then it deletes them (the manager still running, for any finalizer) and stops it.
func runBroken(ctx context.Context, t *testing.T, c client.Client, op string, n int, breakage *brokenCopy) brokenRun {
	manager := startBenchManager(t, op, "--pprof-bind-address="+scaleProfiles)
	namespaces := scaleNamespaces(ctx, t, c, op, n)
	healthy := scaleSample(t, op)
	var broken *unstructured.Unstructured
	run := brokenRun{healthy: n}
	if breakage != nil {
		broken = brokenSample(ctx, t, c, op, *breakage, namespaces, n)
		run.broken = n / brokenEvery
		run.healthy -= run.broken
	}
	watch := watchManager()
	start := time.Now()
	createCopiesOf(ctx, t, c, namespaces, n, func(i int) *unstructured.Unstructured {
		if broken != nil && i%brokenEvery == brokenEvery-1 {
			return broken
		}
		return healthy
	})
	for ; time.Since(start) < scaleSettleLimit; time.Sleep(200 * time.Millisecond) {
		if run.toSettled == 0 {
			settled, ready := settledCopies(ctx, t, c, healthy)
			run.settled = settled
			if scaleReadyOnKwok[op] {
				run.settled = ready
			}
			if run.settled == run.healthy {
				run.toSettled = time.Since(start)
			}
		}
		// The broken copies are listed once the healthy ones settled: until then the
		// benchmark asks the API server for as much in run B as in run A.
		if broken != nil && run.toSettled != 0 {
			run.reported, run.unreported = reportedCopies(ctx, t, c, broken, breakage.reason)
		}
		if run.toSettled != 0 && run.reported == run.broken {
			break
		}
	}
	_, run.longestProcessing = watch.stop()
	if run.toSettled == 0 {
		run.toSettled = time.Since(start)
		t.Errorf("%s: %d of %d healthy copies settled after %s", op, run.settled, run.healthy, scaleSettleLimit)
	}
	if run.reported < run.broken {
		t.Errorf("%s: %d of %d broken copies report %s after %s; for one: %s", op, run.reported, run.broken, breakage.reason,
			scaleSettleLimit, run.unreported)
	}
	fmt.Printf("broken tenth, %s, %d copies of which %d broken: %d of %d healthy settled in %s; %d broken report their reason; longest item %.1f s\n",
		op, n, run.broken, run.settled, run.healthy, run.toSettled.Round(100*time.Millisecond), run.reported, run.longestProcessing)
	deleteNamespaces(t, c, scaleSettleLimit, namespaces...)
	stopBenchManager(manager)
	return run
}

// brokenSample is op's sample broken as breakage says, labelled apart from the healthy copies
// (scaleLabel op-broken), once the objects in its way are made in the namespaces of the
// broken copies among n spread over namespaces.
func brokenSample(ctx context.Context, t *testing.T, c client.Client, op string, breakage brokenCopy, namespaces []string,
	n int) *unstructured.Unstructured {
	sample := scaleSample(t, op)
	labels := sample.GetLabels()
	labels[scaleLabel] = op + "-broken"
	sample.SetLabels(labels)
	if breakage.field != nil {
		must(t, unstructured.SetNestedField(sample.Object, breakage.value, breakage.field...))
	}
	if breakage.inTheWay != nil {
		var copies []types.NamespacedName
		for i := brokenEvery - 1; i < n; i += brokenEvery {
			copies = append(copies, types.NamespacedName{Namespace: copyNamespace(namespaces, n, i), Name: copyName(sample, i)})
		}
		for _, obj := range breakage.inTheWay(copies) {
			must(t, c.Create(ctx, obj))
		}
	}
	return sample
}

// reportedCopies counts the broken copies whose status, at their generation, is Degraded and
// not Ready, both for reason, and says what one that is not gives instead.
func reportedCopies(ctx context.Context, t *testing.T, c client.Client, broken *unstructured.Unstructured, reason string) (int, string) {
	reported, other := 0, ""
	for _, u := range listCopies(ctx, t, c, broken) {
		observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		degraded, degradedReason := conditionOf(u, "Degraded")
		ready, readyReason := conditionOf(u, "Ready")
		switch {
		case observed == u.GetGeneration() && degraded == "True" && degradedReason == reason && ready == "False" && readyReason == reason:
			reported++
		case other == "":
			other = fmt.Sprintf("%s/%s, status of generation %d of %d: Degraded %q (%s), Ready %q (%s)", u.GetNamespace(), u.GetName(),
				observed, u.GetGeneration(), degraded, degradedReason, ready, readyReason)
		}
	}
	return reported, other
}

// serveKMMModules serves KMM's Module kind from ptemplate-device's stand-in CRD until the test
// ends, then removes it (before TestBenchScale, which measures Ptemplates waiting for KMM). A
// cluster that serves Modules already is left as it is.
func serveKMMModules(ctx context.Context, t *testing.T, cfg *rest.Config, c client.Client) {
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	key := client.ObjectKey{Name: "modules.kmm.sigs.x-k8s.io"}
	if err := c.Get(ctx, key, crd); !apierrors.IsNotFound(err) {
		must(t, err)
		return
	}
	options := envtest.CRDInstallOptions{Paths: []string{filepath.Join("..", "operators", "ptemplate-device", "test", "kmm-module-crd.yaml")},
		ErrorIfPathMissing: true}
	_, err := envtest.InstallCRDs(cfg, options)
	must(t, err)
	t.Cleanup(func() {
		must(t, envtest.UninstallCRDs(cfg, options))
		waitFor(t, time.Minute, "KMM's Module CRD is gone", func() bool { return apierrors.IsNotFound(c.Get(ctx, key, crd)) })
	})
}

func printBrokenTable(pairs []brokenPair) {
	fmt.Printf("\n== bench-scale, a broken tenth: each manager with copies of its sample created at once; A all healthy, B every tenth broken, run A, B, B, A; target B/A under %.1f\n", brokenTarget)
	fmt.Printf("| operator | healthy copies A / B | A: create → healthy settled | B: create → healthy settled | B / A | spread of A's, of B's | longest held A / B | broken copies reporting |\n")
	fmt.Printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, p := range pairs {
		fmt.Printf("| %s | %d / %d | %s, %s | %s, %s | %.2f | %.0f %%, %.0f %% | %.1f s / %.1f s | %d of %d: %s |\n", p.operator, p.a[0].healthy, p.b[0].healthy,
			p.a[0].toSettled.Round(100*time.Millisecond), p.a[1].toSettled.Round(100*time.Millisecond),
			p.b[0].toSettled.Round(100*time.Millisecond), p.b[1].toSettled.Round(100*time.Millisecond), p.ratio(), 100*spread(p.a), 100*spread(p.b),
			max(p.a[0].longestProcessing, p.a[1].longestProcessing), max(p.b[0].longestProcessing, p.b[1].longestProcessing),
			p.b[0].reported+p.b[1].reported, p.b[0].broken+p.b[1].broken, p.reason)
	}
}
