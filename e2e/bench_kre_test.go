//go:build bench

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/quintet-operators/quintet/e2e/clusterconfig"
)

// The kre-runtime benchmark's shape: requests per row, by concurrency, after a warm-up.
var benchKRERequests = map[int]int{1: 300, 16: 3000}

const benchKREWarmup = 100

// kreLoad is one row: requests at a concurrency, their latencies, how many failed.
type kreLoad struct {
	mode        string
	concurrency int
	elapsed     time.Duration
	latencies   []time.Duration
	failures    int
	// firstFailure says how the first failed request failed.
	firstFailure string
}

func (l kreLoad) rate() float64 { return float64(len(l.latencies)) / l.elapsed.Seconds() }

func (l kreLoad) percentile(p float64) time.Duration {
	if len(l.latencies) == 0 {
		return 0
	}
	return l.latencies[int(p*float64(len(l.latencies)-1))]
}

// TestBenchKRE runs kre-runtime's sample workflow (entrypoint, prepare, greet, stamp) on the
// local cluster's real nodes, on a Runtime whose NATS, MongoDB (FerretDB) and MinIO
// (versitygw) run there too, and posts to the entrypoint's Service at concurrency 1 and 16:
// first with the last node keeping every result (a MongoDB document and an object, read
// back), then with NATS alone (KRT_SAVE_RESULTS=false). It prints requests per second,
// p50/p99 latency, the ratios of the two, and each runner's resident memory.
func TestBenchKRE(t *testing.T) {
	ctx := context.Background()
	cfg, err := clusterconfig.Config()
	must(t, err)
	c, err := client.New(cfg, client.Options{})
	must(t, err)
	_, err = envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join("..", "operators", "kre-runtime", "config", "crd", "bases")}, ErrorIfPathMissing: true,
	})
	must(t, err)
	startBenchManager(t, "kre-runtime")
	ns := benchNamespace(t, c, "bench-kre")
	must(t, c.Create(ctx, benchKRERuntime(t, ns)))

	rows := make([]kreLoad, 0, 4)
	memory := map[string]string{}
	for _, mode := range []string{"saving", "nats-only"} {
		version := benchKREVersion(t, ns, mode)
		must(t, c.Create(ctx, version))
		waitFor(t, 10*time.Minute, "RuntimeVersion "+version.GetName()+" Ready", func() bool {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(version.GroupVersionKind())
			return c.Get(ctx, client.ObjectKeyFromObject(version), got) == nil && conditionTrue(*got, "Ready")
		})
		svc := &corev1.Service{}
		must(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: version.GetName() + "-entrypoint"}, svc))
		url := fmt.Sprintf("http://%s/predict?workflow=Greet", svc.Spec.ClusterIP)
		waitFor(t, 2*time.Minute, "the entrypoint's Service to answer", func() bool { return postConcurrently(url, 1, 1).failures == 0 })
		if warm := postConcurrently(url, 4, benchKREWarmup); warm.failures > 0 {
			t.Fatalf("%s: %d of the warm-up's requests failed; the first: %s", mode, warm.failures, warm.firstFailure)
		}
		for _, concurrency := range []int{1, 16} {
			row := postConcurrently(url, concurrency, benchKRERequests[concurrency])
			row.mode = mode
			rows = append(rows, row)
		}
		memory[mode] = runnerMemory(t, c, ns, version.GetName())
		must(t, c.Delete(ctx, version))
		waitFor(t, 5*time.Minute, "the version's pods gone", func() bool {
			pods := &corev1.PodList{}
			return c.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"kre.konstellation.io/version": version.GetName()}) == nil &&
				len(pods.Items) == 0
		})
	}

	fmt.Println("\nkre-runtime: POST /predict through entrypoint -> prepare -> greet -> stamp, all on the real nodes")
	fmt.Printf("%-10s %11s %8s %9s %9s %9s %8s\n", "mode", "concurrency", "requests", "req/s", "p50", "p99", "failures")
	for _, r := range rows {
		fmt.Printf("%-10s %11d %8d %9.0f %9s %9s %8d\n", r.mode, r.concurrency, len(r.latencies), r.rate(),
			r.percentile(0.50).Round(10*time.Microsecond), r.percentile(0.99).Round(10*time.Microsecond), r.failures)
	}
	for i, concurrency := range []int{1, 16} {
		saving, natsOnly := rows[i], rows[i+2]
		fmt.Printf("saving / NATS alone at concurrency %d: req/s %.2f×, p50 %.2f×, p99 %.2f×\n", concurrency,
			saving.rate()/natsOnly.rate(), float64(saving.percentile(0.5))/float64(natsOnly.percentile(0.5)),
			float64(saving.percentile(0.99))/float64(natsOnly.percentile(0.99)))
	}
	for _, mode := range []string{"saving", "nats-only"} {
		fmt.Printf("runner memory, %s (RSS now / peak): %s\n", mode, memory[mode])
	}
	writeKREFigures(t, rows)
	for _, r := range rows {
		if r.failures > 0 {
			t.Errorf("%s at concurrency %d: %d requests failed; the first: %s", r.mode, r.concurrency, r.failures, r.firstFailure)
		}
	}
}

// kreModeNames name the modes in the figures.
var kreModeNames = map[string]string{"saving": "keeping results", "nats-only": "NATS alone"}

// writeKREFigures writes the rows as the benchmark's figures.
func writeKREFigures(t *testing.T, rows []kreLoad) {
	runs := make([]string, 0, len(rows))
	for _, r := range rows {
		clients := "1 client"
		if r.concurrency > 1 {
			clients = fmt.Sprintf("%d clients", r.concurrency)
		}
		runs = append(runs, fmt.Sprintf("%s, %s\t%.0f\t%.2f\t%.2f", kreModeNames[r.mode], clients,
			r.rate(), float64(r.percentile(0.5).Microseconds())/1000, float64(r.percentile(0.99).Microseconds())/1000))
	}
	writeBenchFigures(t, "run\trequests per second\tp50 latency (ms)\tp99 latency (ms)", runs...)
}

// postConcurrently posts n requests to url from concurrency clients and times each.
func postConcurrently(url string, concurrency, n int) kreLoad {
	httpClient := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: concurrency}}
	work := make(chan int, n)
	for i := range n {
		work <- i
	}
	close(work)
	var mu sync.Mutex
	load := kreLoad{concurrency: concurrency}
	start := time.Now()
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for i := range work {
				began := time.Now()
				resp, err := httpClient.Post(url, "text/plain", strings.NewReader("hello "+strconv.Itoa(i)))
				var body []byte
				if err == nil {
					body, _ = io.ReadAll(resp.Body)
					_ = resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("%s: %s", resp.Status, body)
					}
				}
				took := time.Since(began)
				mu.Lock()
				if err == nil {
					load.latencies = append(load.latencies, took)
				} else if load.failures++; load.firstFailure == "" {
					load.firstFailure = err.Error()
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	load.elapsed = time.Since(start)
	slices.Sort(load.latencies)
	return load
}

// benchKRERuntime is a Runtime with its three servers on the real nodes, from the images make
// images builds.
func benchKRERuntime(t *testing.T, namespace string) *unstructured.Unstructured {
	server := func(image string) map[string]any {
		return map[string]any{"image": benchEnv(t, image), "placement": realNodePlacement()}
	}
	natsSpec := server("E2E_NATS_IMAGE")
	natsSpec["replicas"] = int64(1)
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kre.konstellation.io/v1alpha1", "kind": "Runtime",
		"metadata": map[string]any{"name": "example4", "namespace": namespace},
		"spec": map[string]any{"nats_streaming": natsSpec, "mongo": server("E2E_FERRETDB_IMAGE"),
			"minio": server("E2E_VERSITYGW_MINIO_IMAGE")},
	}}
}

// benchKREVersion is the sample RuntimeVersion on the real nodes, named for mode; nats-only
// keeps no results.
func benchKREVersion(t *testing.T, namespace, mode string) *unstructured.Unstructured {
	data, err := os.ReadFile(filepath.Join("..", "operators", "kre-runtime", "config", "samples", "kre_v1alpha1_runtimeversion.yaml"))
	must(t, err)
	v := &unstructured.Unstructured{}
	must(t, yaml.Unmarshal(data, &v.Object))
	v.SetName("bench-" + mode)
	v.SetNamespace(namespace)
	must(t, unstructured.SetNestedField(v.Object, realNodePlacement(), "spec", "placement"))
	if mode == "nats-only" {
		config, _, _ := unstructured.NestedSlice(v.Object, "spec", "config")
		config = append(config, map[string]any{"key": "KRT_SAVE_RESULTS", "value": "false"})
		must(t, unstructured.SetNestedSlice(v.Object, config, "spec", "config"))
	}
	return v
}

// runnerMemory is the resident and peak memory of each runner of version, read from /proc
// of its process on its real node (this machine).
func runnerMemory(t *testing.T, c client.Client, namespace, version string) string {
	pods := &corev1.PodList{}
	must(t, c.List(context.Background(), pods, client.InNamespace(namespace), client.MatchingLabels{"kre.konstellation.io/version": version}))
	parts := make([]string, 0, len(pods.Items))
	for _, p := range pods.Items {
		id := strings.TrimSpace(benchCrictl(t, p.Spec.NodeName, "ps", "-q", "--label", "io.kubernetes.pod.name="+p.Name, "--label", "io.kubernetes.pod.namespace="+namespace))
		pid, err := strconv.Atoi(strings.TrimSpace(benchCrictl(t, p.Spec.NodeName, "inspect", "-o", "go-template", "--template", "{{.info.pid}}", strings.Fields(id)[0])))
		must(t, err)
		parts = append(parts, fmt.Sprintf("%s %.1f MiB/%.1f MiB", p.Labels["kre.konstellation.io/component"],
			float64(procMemory(t, pid, "VmRSS:"))/(1<<20), float64(procMemory(t, pid, "VmHWM:"))/(1<<20)))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// benchCrictl runs crictl against the containerd of the real node named node (its socket under
// the node's folder) and returns what it printed.
func benchCrictl(t *testing.T, node string, args ...string) string {
	if node == "" {
		t.Fatalf("crictl %s: the pod is not scheduled to a node", strings.Join(args, " "))
	}
	out, err := exec.Command(benchEnv(t, "E2E_CRICTL"), append([]string{"--runtime-endpoint", //nolint:gosec // bin/'s crictl
		"unix://" + filepath.Join(benchEnv(t, "E2E_LOCAL_DIR"), "node", node, "containerd", "containerd.sock")}, args...)...).Output()
	must(t, err)
	return string(out)
}

func benchEnv(t *testing.T, name string) string {
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is unset: run make bench-kre", name)
	}
	return v
}
