//go:build bench

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/quintet-operators/quintet/e2e/clusterconfig"
)

// The objects each operator's manager holds in the metrics benchmark: copies of its main
// kind's sample.
const (
	metricsBenchObjects = 100
	metricsBenchScrapes = 20
)

// metricsBenchSamples is each operator's sample of its main kind (config/samples).
var metricsBenchSamples = map[string]string{
	"etcd-cluster":     "etcd_v1beta2_etcdcluster.yaml",
	"gordon":           "operator_v1_gordon.yaml",
	"kre-runtime":      "kre_v1alpha1_runtime.yaml",
	"minimart":         "charts_v1alpha1_minimart.yaml",
	"ptemplate-device": "ptemplates_v1alpha_ptemplate.yaml",
}

// metricsScrape is what one scrape of a manager's /metrics gave.
type metricsScrape struct {
	series, own, bytes int // own: the operator's quintet_* series
	took               time.Duration
}

// TestBenchMetrics measures what each operator costs a user's Prometheus: each manager in turn
// (metrics over plain HTTP on loopback) with 100 copies of its sample on the local cluster; the
// series its /metrics serves (all, and the operator's own quintet_* ones), the bytes, and the
// median time of 20 scrapes, against the same manager with none.
func TestBenchMetrics(t *testing.T) {
	ctx := context.Background()
	cfg, err := clusterconfig.Config()
	must(t, err)
	c, err := client.New(cfg, client.Options{})
	must(t, err)
	ops := make([]string, 0, len(metricsBenchSamples))
	for op := range metricsBenchSamples {
		ops = append(ops, op)
	}
	slices.Sort(ops)
	runs := make([]string, 0, len(ops))
	fmt.Printf("%-17s %8s %8s %10s %10s %10s %12s\n", "operator", "objects", "series", "quintet_*", "per object", "bytes", "scrape p50")
	for _, op := range ops {
		_, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{
			Paths: []string{filepath.Join("..", "operators", op, "config", "crd", "bases")}, ErrorIfPathMissing: true,
		})
		must(t, err)
		manager := startBenchManager(t, op)
		empty := medianScrape(t)
		ns := benchNamespace(t, c, "bench-metrics-"+op)
		kind := createSampleCopies(ctx, t, c, op, ns)
		exported := waitForConditionSeries(t, kind, ns)
		full := medianScrape(t)
		stopBenchManager(manager)
		perObject := float64(full.series-empty.series) / float64(max(exported, 1))
		for _, s := range []struct {
			objects int
			m       metricsScrape
		}{{0, empty}, {exported, full}} {
			fmt.Printf("%-17s %8d %8d %10d %10.1f %10d %12s\n", op, s.objects, s.m.series, s.m.own, perObject, s.m.bytes, s.m.took.Round(10*time.Microsecond))
		}
		runs = append(runs, fmt.Sprintf("%s\t%d\t%d\t%d\t%.1f\t%d\t%.2f", op, exported, full.series, full.own, perObject, full.bytes, float64(full.took.Microseconds())/1000))
	}
	writeBenchFigures(t, "operator\tobjects exported (objects)\tseries (series)\tquintet_* series (series)\tseries per object (series)\tbytes (B)\tscrape p50 (ms)", runs...)
}

// createSampleCopies creates metricsBenchObjects copies of the operator's sample in ns, and
// returns their kind.
func createSampleCopies(ctx context.Context, t *testing.T, c client.Client, op, ns string) string {
	sample := benchSample(t, op)
	for i := range metricsBenchObjects {
		u := sample.DeepCopy()
		u.SetNamespace(ns)
		u.SetName(fmt.Sprintf("%s-%03d", sample.GetName(), i))
		must(t, c.Create(ctx, u))
	}
	return sample.GetKind()
}

// benchSample is the operator's sample of its main kind (metricsBenchSamples).
func benchSample(t *testing.T, op string) *unstructured.Unstructured {
	data, err := os.ReadFile(filepath.Join("..", "operators", op, "config", "samples", metricsBenchSamples[op]))
	must(t, err)
	sample := &unstructured.Unstructured{}
	must(t, yaml.Unmarshal(data, &sample.Object))
	return sample
}

// waitForConditionSeries waits, five minutes at most, until the manager exports a condition
// of every copy, and returns how many it exports: a bench of a manager that falls behind says
// so rather than fail.
func waitForConditionSeries(t *testing.T, kind, ns string) int {
	// The exposition orders labels by name: kind, name, namespace, status, type.
	prefix, inNamespace := fmt.Sprintf(`quintet_resource_condition{kind=%q,name="`, kind), fmt.Sprintf(`",namespace=%q,`, ns)
	names := map[string]bool{}
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline) && len(names) < metricsBenchObjects; time.Sleep(2 * time.Second) {
		names = map[string]bool{}
		for _, line := range strings.Split(string(scrapeBody(t)), "\n") {
			if rest, ok := strings.CutPrefix(line, prefix); ok && strings.Contains(rest, inNamespace) {
				name, _, _ := strings.Cut(rest, `"`)
				names[name] = true
			}
		}
	}
	if len(names) < metricsBenchObjects {
		t.Logf("the %s manager exports the conditions of %d of %d objects after 5 minutes", kind, len(names), metricsBenchObjects)
	}
	return len(names)
}

// medianScrape scrapes the manager metricsBenchScrapes times and returns the last scrape's
// counts with the median time.
func medianScrape(t *testing.T) metricsScrape {
	times := make([]time.Duration, 0, metricsBenchScrapes)
	var last metricsScrape
	for range metricsBenchScrapes {
		start := time.Now()
		body := scrapeBody(t)
		times = append(times, time.Since(start))
		last = metricsScrape{bytes: len(body)}
		sc := bufio.NewScanner(strings.NewReader(string(body)))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			last.series++
			if strings.HasPrefix(line, "quintet_") {
				last.own++
			}
		}
		must(t, sc.Err())
	}
	slices.Sort(times)
	last.took = times[len(times)/2]
	return last
}

func scrapeBody(t *testing.T) []byte {
	body, err := scrapeOnce()
	must(t, err)
	return body
}

// scrapeClient gives up on a scrape after 30 s: a manager short of memory may answer slowly.
var scrapeClient = &http.Client{Timeout: 30 * time.Second}

// scrapeOnce reads the manager's /metrics.
func scrapeOnce() ([]byte, error) { return scrapeAt(scrapeClient, benchMetrics) }

// scrapeAt reads the /metrics of the manager at address with the client hc.
func scrapeAt(hc *http.Client, address string) ([]byte, error) {
	resp, err := hc.Get("http://" + address + "/metrics")
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("scraping the manager: %s", resp.Status)
	}
	return body, err
}
