package status

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/shared/internal/exposition"
	"github.com/quintet-operators/quintet/shared/internal/testkind"
)

// The series of one scrape share the label pairs they repeat (the object's namespace and name,
// across its gauges), and each is what prometheus.NewConstMetric makes of the same labels:
// sorted by name, constant labels among them.
func TestAScrapesSeriesShareTheLabelPairsTheyRepeatAndSayWhatConstMetricsSay(t *testing.T) {
	g := []*Gauge{
		NewGauge(prometheus.GaugeOpts{Name: "members", Help: "M.", ConstLabels: prometheus.Labels{"operator": "test"}}, []string{namespaceLabel, nameLabel}),
		NewGauge(prometheus.GaugeOpts{Name: "leader", Help: "L."}, []string{namespaceLabel, nameLabel, "member"}),
	}
	series := NewSeries[string](g...)
	series.Set("a", []Sample{{g[0], []string{"ns", "a"}, 3}, {g[1], []string{"ns", "a", "a-0"}, 1}})
	series.Set("b", []Sample{{g[0], []string{"ns", "b"}, 1}})
	ch := make(chan prometheus.Metric, 10)
	series.Collect(ch)
	close(ch)
	pairs := map[string]*dto.LabelPair{}
	for m := range ch {
		var got dto.Metric
		if err := m.Write(&got); err != nil {
			t.Fatal(err)
		}
		values := map[string]string{}
		for _, p := range got.Label {
			values[p.GetName()] = p.GetValue()
			key := p.GetName() + "=" + p.GetValue()
			if seen, ok := pairs[key]; ok && seen != p {
				t.Errorf("two series of the scrape have pairs of their own for %s", key)
			}
			pairs[key] = p
		}
		gauge := g[0]
		if _, ok := values["member"]; ok {
			gauge = g[1]
		}
		labels := []string{values[namespaceLabel], values[nameLabel]}
		if gauge == g[1] {
			labels = append(labels, values["member"])
		}
		var want dto.Metric
		if err := prometheus.MustNewConstMetric(gauge.family.Desc, prometheus.GaugeValue, got.GetGauge().GetValue(), labels...).Write(&want); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(&got, &want) {
			t.Errorf("series %v; want %v", &got, &want)
		}
	}
	if len(pairs) != 5 { // operator=test, namespace=ns, name=a, name=b, member=a-0
		t.Errorf("label pairs %v; want 5", pairs)
	}
}

// listReader is a cache that holds items, for the exporter.
type listReader struct {
	client.Reader
	items []testkind.Widget
}

func (r listReader) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	list.(*testkind.WidgetList).Items = r.items
	return nil
}

// widgets are n objects, ten per namespace, each with five conditions.
func widgets(n int) []testkind.Widget {
	items := make([]testkind.Widget, n)
	for i := range items {
		items[i].Namespace, items[i].Name = fmt.Sprintf("ns-%03d", i/10), fmt.Sprintf("copy-%04d", i)
		for _, t := range []string{"Ready", "Progressing", "Degraded", "Available", "Restored"} {
			items[i].Status.Conditions = append(items[i].Status.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionTrue})
		}
	}
	return items
}

// BenchmarkScrape is what a scrape of the condition series of 100 and of 1000 objects (five
// conditions each: 1,500 and 15,000 series) and of four gauges of each (a Series) allocates,
// in one run: in bytes per series, gathered by a registry with label pairs shared within the
// scrape, and with prometheus.NewConstMetric (as they were); and in bytes and milliseconds per
// scrape served gzipped, by promhttp from such a registry (as controller-runtime's handler did)
// and written by the manager's exposition handler (as it is).
func BenchmarkScrape(b *testing.B) {
	for _, objects := range []int{100, 1000} {
		b.Run(fmt.Sprintf("objects=%d", objects), func(b *testing.B) { benchmarkScrapeOf(b, objects) })
	}
}

func benchmarkScrapeOf(b *testing.B, objects int) {
	items := widgets(objects)
	source := &conditionSource{kind: "Widget", reader: listReader{items: items}, list: &testkind.WidgetList{}}
	conditions := &conditionsCollector{sources: map[*conditionSource]struct{}{source: {}}}
	gauges := make([]*Gauge, 4)
	for g := range gauges {
		gauges[g] = NewGauge(prometheus.GaugeOpts{Name: fmt.Sprintf("g%d", g), Help: "G."}, []string{namespaceLabel, nameLabel})
	}
	series := NewSeries[string](gauges...)
	for _, w := range items {
		samples := make([]Sample, len(gauges))
		for g := range gauges {
			samples[g] = Sample{gauges[g], []string{w.Namespace, w.Name}, float64(g)}
		}
		series.Set(w.Name, samples)
	}
	shared := prometheus.NewRegistry()
	shared.MustRegister(conditions, series)
	own := prometheus.NewRegistry()
	own.MustRegister(constMetrics{items, gauges})
	promhttpHandler := promhttp.HandlerFor(shared, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError})
	written := exposition.HandlerOf(prometheus.NewRegistry(), conditions, series)
	var sharedBytes, ownBytes, promhttpBytes, writtenBytes float64
	var promhttpTime, writtenTime time.Duration
	for b.Loop() {
		sharedBytes = bytesPerSeries(b, shared)
		ownBytes = bytesPerSeries(b, own)
		promhttpBytes, promhttpTime = scrapeOnce(b, promhttpHandler)
		writtenBytes, writtenTime = scrapeOnce(b, written)
	}
	b.ReportMetric(sharedBytes, "B/series")
	b.ReportMetric(ownBytes, "B/series-own-pairs")
	b.ReportMetric(ownBytes/sharedBytes, "ratio")
	b.ReportMetric(promhttpBytes, "B/scrape-promhttp")
	b.ReportMetric(writtenBytes, "B/scrape-written")
	b.ReportMetric(promhttpBytes/writtenBytes, "ratio-served")
	b.ReportMetric(float64(promhttpTime.Microseconds())/1000, "ms/scrape-promhttp")
	b.ReportMetric(float64(writtenTime.Microseconds())/1000, "ms/scrape-written")
}

// scrapeOnce serves one gzipped scrape: the bytes allocated, and how long it took.
func scrapeOnce(b *testing.B, h http.Handler) (float64, time.Duration) {
	r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	r.Header.Set("Accept-Encoding", "gzip")
	w := httptest.NewRecorder()
	w.Body.Grow(1 << 20) // the response is the client's, not the scrape's
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	h.ServeHTTP(w, r)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if w.Code != http.StatusOK {
		b.Fatalf("scrape: %d %s", w.Code, w.Body)
	}
	return float64(after.TotalAlloc - before.TotalAlloc), took
}

// bytesPerSeries gathers registry's series once: the bytes allocated per series.
func bytesPerSeries(b *testing.B, registry *prometheus.Registry) float64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	families, err := registry.Gather()
	runtime.ReadMemStats(&after)
	if err != nil {
		b.Fatal(err)
	}
	count := 0
	for _, f := range families {
		count += len(f.Metric)
	}
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(count)
}

// constMetrics are the series of BenchmarkScrape made with NewConstMetric.
type constMetrics struct {
	items  []testkind.Widget
	gauges []*Gauge
}

func (c constMetrics) Describe(ch chan<- *prometheus.Desc) {
	prometheus.DescribeByCollect(c, ch)
}

func (c constMetrics) Collect(ch chan<- prometheus.Metric) {
	for _, w := range c.items {
		for _, cond := range w.Status.Conditions {
			for _, st := range conditionStatuses {
				ch <- prometheus.MustNewConstMetric(conditionFamily.Desc, prometheus.GaugeValue, 0, "Widget", w.Namespace, w.Name, cond.Type, st)
			}
		}
		for g, gauge := range c.gauges {
			ch <- prometheus.MustNewConstMetric(gauge.family.Desc, prometheus.GaugeValue, float64(g), w.Namespace, w.Name)
		}
	}
}
