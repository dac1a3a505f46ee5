//go:build bench

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/quintet-operators/quintet/e2e/clusterconfig"
)

// The minimart benchmark's shape: the 100 Minimarts, then 3 minutes of steady state.
const (
	benchMinimarts     = 100
	benchSteadyState   = 3 * time.Minute
	benchSettle        = 30 * time.Second
	benchMinimartCRD   = "minimarts.charts.samutup.com"
	benchMinimartPort  = "127.0.0.1:18081"
	benchHelmOperPort  = "127.0.0.1:18082"
	benchDeployTimeout = 10 * time.Minute
)

// minimartBenchRun is what one operator did with 100 Minimarts.
type minimartBenchRun struct {
	name       string
	toDeployed time.Duration // creating the Minimarts to 100 deployed Helm releases
	steady     requestCounts // API requests in the steady-state window
	steadyCPU  time.Duration // CPU time in the steady-state window
	peakRSS    int64
}

// TestBenchMinimart runs 100 Minimarts with the minimart manager, then with operator-sdk
// v1.42.2's helm-operator (the anchor: BENCH_HELM_OPERATOR, built from source) on the same
// chart and watches.yaml, on the local cluster, and prints the time to 100 deployed releases
// and, for 3 minutes of steady state, each manager's API requests and CPU time, and its peak
// memory, with their ratios.
func TestBenchMinimart(t *testing.T) {
	helmOperator := os.Getenv("BENCH_HELM_OPERATOR")
	if helmOperator == "" {
		t.Fatal("BENCH_HELM_OPERATOR is unset: run make bench-minimart")
	}
	cfg, err := clusterconfig.Config()
	must(t, err)
	c, err := client.New(cfg, client.Options{})
	must(t, err)
	_, err = envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(minimartDir, "config", "crd", "bases")}, ErrorIfPathMissing: true,
	})
	must(t, err)
	ours := filepath.Join(t.TempDir(), "minimart-manager")
	build := exec.Command("go", "build", "-o", ours, "./cmd")
	build.Dir = minimartDir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the manager: %v\n%s", err, out)
	}
	oursWith := func(extra ...string) []string {
		return append([]string{ours, "--metrics-bind-address=" + benchMinimartPort, "--metrics-secure=false",
			"--health-probe-bind-address=0", "--leader-elect=false"}, extra...)
	}

	minimart := runMinimartBench(t, c, "minimart (as deployed: 4 workers)", benchMinimartPort, true, oursWith()...)
	likeForLike := runMinimartBench(t, c, "minimart (2 workers, as the anchor)", benchMinimartPort, false,
		oursWith("--max-concurrent-reconciles=2")...)

	// The anchor runs with the CRD its scaffold makes: spec and status without a schema (it
	// writes a status of its own shape).
	useSchemalessCRD(t, c)
	anchor := runMinimartBench(t, c, "helm-operator v1.42.2 (defaults: 2 workers, 1m reconcile period)", benchHelmOperPort, true,
		helmOperator, "run", "--watches-file=watches.yaml", "--metrics-bind-address="+benchHelmOperPort,
		"--health-probe-bind-address=0", "--leader-elect=false")

	t.Logf("\n%d Minimarts; steady state: %s after the last Deployment is available, for %s\n", benchMinimarts, benchSettle, benchSteadyState)
	t.Logf("| | %s | %s | ratio |", minimart.name, anchor.name)
	t.Logf("| --- | --- | --- | --- |")
	t.Logf("| create to 100 releases deployed | %.1f s (2 workers: %.1f s) | %.1f s | %.2f (2 workers: %.2f) |",
		minimart.toDeployed.Seconds(), likeForLike.toDeployed.Seconds(), anchor.toDeployed.Seconds(),
		minimart.toDeployed.Seconds()/anchor.toDeployed.Seconds(), likeForLike.toDeployed.Seconds()/anchor.toDeployed.Seconds())
	t.Logf("| API requests in steady state | %s | %s | %s |", minimart.steady, anchor.steady, ratio(minimart.steady.total(), anchor.steady.total()))
	t.Logf("| CPU time in steady state | %.2f s | %.2f s | %s |", minimart.steadyCPU.Seconds(), anchor.steadyCPU.Seconds(),
		ratio(minimart.steadyCPU.Seconds(), anchor.steadyCPU.Seconds()))
	t.Logf("| peak RSS | %d MiB | %d MiB | %.2f |", minimart.peakRSS>>20, anchor.peakRSS>>20, float64(minimart.peakRSS)/float64(anchor.peakRSS))
	writeBenchFigures(t, fmt.Sprintf("run\tcreate to %d releases deployed (s)\tAPI requests in %s of steady state\tCPU in steady state (s)\tpeak RSS (MiB)",
		benchMinimarts, benchSteadyState),
		fmt.Sprintf("minimart\t%.1f\t%.0f\t%.2f\t%d", minimart.toDeployed.Seconds(), minimart.steady.total(), minimart.steadyCPU.Seconds(), minimart.peakRSS>>20),
		fmt.Sprintf("helm-operator v1.42.2\t%.1f\t%.0f\t%.2f\t%d", anchor.toDeployed.Seconds(), anchor.steady.total(), anchor.steadyCPU.Seconds(), anchor.peakRSS>>20))
}

// minimartDir is minimart's module: the working directory of both managers (watches.yaml
// names the chart by a path relative to it).
var minimartDir = filepath.Join("..", "operators", "minimart")

// runMinimartBench runs a manager (argv) on a namespace of its own: creates the Minimarts,
// times them to deployed releases and, with steady, measures a steady-state window; then
// deletes the namespace (the manager uninstalls the releases) and stops the manager.
func runMinimartBench(t *testing.T, c client.Client, name, metrics string, steady bool, argv ...string) minimartBenchRun {
	ctx := context.Background()
	run := minimartBenchRun{name: name}
	ns := benchNamespace(t, c, "bench-minimart")
	logf, err := os.Create(filepath.Join(t.TempDir(), "manager.log"))
	must(t, err)
	cmd := exec.Command(argv[0], argv[1:]...) //nolint:gosec // the benchmark's own managers
	cmd.Dir, cmd.Stdout, cmd.Stderr = minimartDir, logf, logf
	cmd.Env = append(os.Environ(), "WATCH_NAMESPACE="+ns)
	must(t, cmd.Start())
	defer stopBenchManager(cmd)
	waitForMetrics(t, metrics)

	start := time.Now()
	for i := range benchMinimarts {
		m := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "charts.samutup.com/v1alpha1", "kind": "Minimart",
			"metadata": map[string]any{"name": fmt.Sprintf("store-%03d", i), "namespace": ns},
			"spec": map[string]any{"storeName": fmt.Sprintf("Store %d", i),
				"products": []any{map[string]any{"name": "apples", "price": "3.50"}}},
		}}
		must(t, c.Create(ctx, m))
	}
	waitFor(t, benchDeployTimeout, name+": 100 releases deployed", func() bool {
		secrets := &corev1.SecretList{}
		must(t, c.List(ctx, secrets, client.InNamespace(ns), client.MatchingLabels{"owner": "helm", "status": "deployed"}))
		return len(secrets.Items) == benchMinimarts
	})
	run.toDeployed = time.Since(start)
	t.Logf("%s: 100 releases deployed in %s", name, run.toDeployed)

	if steady {
		waitFor(t, benchDeployTimeout, name+": 100 Deployments available", func() bool {
			deployments := &appsv1.DeploymentList{}
			must(t, c.List(ctx, deployments, client.InNamespace(ns)))
			available := 0
			for _, d := range deployments.Items {
				if d.Status.AvailableReplicas == 1 {
					available++
				}
			}
			return available == benchMinimarts
		})
		time.Sleep(benchSettle)
		requests, cpu := scrapeRequests(t, metrics), cpuTime(t, cmd)
		time.Sleep(benchSteadyState)
		run.steady, run.steadyCPU = scrapeRequests(t, metrics).sub(requests), cpuTime(t, cmd)-cpu
		t.Logf("%s: steady state: %s requests, %.2f s CPU", name, run.steady, run.steadyCPU.Seconds())
	}
	run.peakRSS = peakRSS(t, cmd)
	deleteNamespaces(t, c, benchTimeout, ns)
	return run
}

// useSchemalessCRD replaces the Minimart CRD's schema with the one operator-sdk's Helm
// scaffold generates: spec and status keep any field.
func useSchemalessCRD(t *testing.T, c client.Client) {
	ctx := context.Background()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	must(t, c.Get(ctx, client.ObjectKey{Name: benchMinimartCRD}, crd))
	anything := apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: new(true)}
	v := &crd.Spec.Versions[0]
	v.AdditionalPrinterColumns = nil
	v.Schema.OpenAPIV3Schema = &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"apiVersion": {Type: "string"}, "kind": {Type: "string"}, "metadata": {Type: "object"}, "spec": anything, "status": anything,
	}}
	must(t, c.Update(ctx, crd))
	time.Sleep(3 * time.Second) // the API server serves the new schema
}

// cpuTime is the CPU time (user and system) the process has used, from /proc/<pid>/stat.
func cpuTime(t *testing.T, cmd *exec.Cmd) time.Duration {
	// utime and stime are the 14th and 15th fields, in clock ticks of 1/100 s (USER_HZ).
	ticks := 0
	for _, f := range procStat(t, cmd.Process.Pid)[11:13] {
		n, err := strconv.Atoi(f)
		must(t, err)
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// procStat is the process's /proc/<pid>/stat after its command name (in parentheses, which may
// hold spaces): the 3rd field (its state) first.
func procStat(t *testing.T, pid int) []string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	must(t, err)
	return strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
}

// waitFor polls done every half second until it holds, failing after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if done() {
			return
		}
	}
	t.Fatalf("%s: not within %s", what, timeout)
}

func ratio(ours, anchor float64) string {
	if ours == 0 {
		return fmt.Sprintf("none of the anchor's %.0f", anchor)
	}
	return fmt.Sprintf("%.3f (%.1f× lower)", ours/anchor, anchor/ours)
}
