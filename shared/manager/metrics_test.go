package manager

import (
	"compress/gzip"
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/quintet-operators/quintet/shared/status"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// blockingCollector stands for a scrape that takes a while to build: each Collect waits until
// release is closed, and counts how many were being built at once.
type blockingCollector struct {
	release chan struct{}
	calls   atomic.Int32
	mu      sync.Mutex
	current int32 // being built now
	most    int32 // built at once, at most
}

var scrapeDesc = prometheus.NewDesc("quintet_test_scrape", "A scrape.", nil, nil)

func (c *blockingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- scrapeDesc }

func (c *blockingCollector) Collect(ch chan<- prometheus.Metric) {
	c.calls.Add(1)
	c.mu.Lock()
	c.current++
	c.most = max(c.most, c.current)
	c.mu.Unlock()
	<-c.release
	c.mu.Lock()
	c.current--
	c.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(scrapeDesc, prometheus.GaugeValue, 1)
}

// serveMetrics starts the metrics server the flags give (plain HTTP on a free loopback port)
// and returns the scrape's URL once it answers.
// c, when not nil, is registered in controller-runtime's registry for the test.
func serveMetrics(t *testing.T, c prometheus.Collector) string {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreeLoopbackPort(t))
	if c != nil {
		if err := metrics.Registry.Register(c); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { metrics.Registry.Unregister(c) })
	}
	opts := Options("gordon", Flags{MetricsAddr: addr}, nil).Metrics
	srv, err := metricsserver.NewServer(opts, &rest.Config{}, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = srv.Start(ctx) }()
	url := "http://" + addr + "/metrics"
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if conn, err := net.Dial("tcp", addr); err == nil {
			_ = conn.Close()
			return url
		} else if time.Now().After(deadline) {
			t.Fatalf("the metrics server did not listen on %s: %v", addr, err)
		}
	}
}

func scrape(url string, timeout time.Duration) error {
	resp, err := (&http.Client{Timeout: timeout}).Get(url)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %s", resp.Status)
	}
	return nil
}

// A manager builds one scrape at a time, and none whose client gave up while it waited: a
// scraper that times out before a manager short of memory answers would otherwise pile scrapes
// up in its heap (about 8 MB each at a thousand objects) until the kernel kills it.
func TestScrapesAreBuiltOneAtATimeAndNotForAClientThatLeft(t *testing.T) {
	c := &blockingCollector{release: make(chan struct{})}
	url := serveMetrics(t, c)

	// Three scrapers that give up after 200 ms, while a first scrape is being built.
	first := make(chan error, 1)
	go func() { first <- scrape(url, time.Minute) }()
	for c.calls.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if err := scrape(url, 200*time.Millisecond); err == nil {
				t.Error("a scrape answered while another was being built")
			}
		})
	}
	wg.Wait()
	// Four that wait for as long as it takes.
	waiting := make(chan error, 4)
	for range 4 {
		go func() { waiting <- scrape(url, time.Minute) }()
	}
	time.Sleep(300 * time.Millisecond)
	close(c.release)
	if err := <-first; err != nil {
		t.Fatalf("the first scrape: %v", err)
	}
	for range 4 {
		if err := <-waiting; err != nil {
			t.Errorf("a scrape that waited its turn: %v", err)
		}
	}
	if c.most != 1 {
		t.Errorf("%d scrapes were built at once, want 1", c.most)
	}
	if got := c.calls.Load(); got != 5 {
		t.Errorf("%d scrapes were built, want 5: the first and the four that waited, none for the three clients that left", got)
	}
}

// The metrics server writes shared/status's series itself, after those of controller-runtime's
// registry, gzipped for a client that accepts it, as Prometheus does.
func TestTheMetricsServerServesTheRegistryAndStatusSeriesGzipped(t *testing.T) {
	written := status.NewGauge(prometheus.GaugeOpts{Name: "quintet_test_written", Help: "Written."}, []string{"namespace", "name"})
	series := status.NewSeries[string](written)
	status.MustRegister(series)
	series.Set("a", []status.Sample{{Gauge: written, Labels: []string{"ns", "a"}, Value: 1}})
	url := serveMetrics(t, nil)
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("status %s, Content-Encoding %q", resp.Status, resp.Header.Get("Content-Encoding"))
	}
	body, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(body)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := families["go_goroutines"]; !ok {
		t.Error("the registry's families are not served")
	}
	if f, ok := families["quintet_test_written"]; !ok || len(f.Metric) != 1 || f.Metric[0].GetGauge().GetValue() != 1 {
		t.Errorf("the status series: %v", f)
	}
}
