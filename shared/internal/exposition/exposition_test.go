package exposition

import (
	"compress/gzip"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"
)

// testCollector gives series as given, to a scrape (EachSeries) and to a registry (Collect,
// through prometheus.NewConstMetric, the registry's own way).
type testCollector struct {
	families []*Family
	series   []testSeries
}

type testSeries struct {
	f      *Family
	value  float64
	values []string
}

func (c *testCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range c.families {
		ch <- f.Desc
	}
}

func (c *testCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.series {
		ch <- prometheus.MustNewConstMetric(s.f.Desc, s.f.Kind(), s.value, s.values...)
	}
}

func (c *testCollector) EachSeries(emit func(*Family, float64, []string)) {
	for _, s := range c.series {
		emit(s.f, s.value, s.values)
	}
}

var (
	members = NewFamily("test_members", "Members of a cluster,\nby state (a \\ in help).", prometheus.GaugeValue,
		[]string{"namespace", "name", "state"}, prometheus.Labels{"operator": "test"})
	replaced = NewFamily("test_replaced_total", "Replaced.", prometheus.CounterValue, []string{"name"}, nil)
	up       = NewFamily("test_up", "Up.", prometheus.GaugeValue, nil, nil)
)

// serve scrapes h as a client that accepts encoding (none when empty): the response, its body
// decompressed.
func serve(t *testing.T, h http.Handler, encoding string) (*httptest.ResponseRecorder, string) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if encoding != "" {
		r.Header.Set("Accept-Encoding", encoding)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	body := io.Reader(w.Body)
	if w.Header().Get("Content-Encoding") == "gzip" {
		z, err := gzip.NewReader(w.Body)
		if err != nil {
			t.Fatal(err)
		}
		body = z
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return w, string(b)
}

// parse parses a scrape as Prometheus does; its series sorted as a registry sorts them.
func parse(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parsing the scrape: %v\n%s", err, text)
	}
	for _, f := range families {
		for _, m := range f.Metric {
			sort.Slice(m.Label, func(i, j int) bool { return m.Label[i].GetName() < m.Label[j].GetName() })
			m.TimestampMs = nil
		}
		sort.Slice(f.Metric, func(i, j int) bool { return f.Metric[i].String() < f.Metric[j].String() })
	}
	return families
}

// A scrape says what a registry of the same collectors gathers (escaped help and label values,
// constant labels, counters, NaN and infinities, a family without labels), after the families
// of the registry it serves beside them, gzipped or not as the client asks.
func TestAScrapeSaysWhatARegistryGathers(t *testing.T) {
	c := &testCollector{families: []*Family{members, replaced, up}, series: []testSeries{
		{members, 3, []string{"ns", "one", "desired"}},
		{members, 1, []string{"ns", "one", `quoted "learner" \ with a` + "\nline"}},
		{members, math.NaN(), []string{"ns", "two", "ready"}},
		{replaced, math.Inf(1), []string{"one"}},
		{replaced, 0.5, []string{"two"}},
		{up, math.Inf(-1), nil},
	}}
	rest := prometheus.NewRegistry()
	plain := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "test_plain", Help: "A registry's."}, []string{"controller"})
	plain.WithLabelValues("a").Set(2)
	rest.MustRegister(plain)
	both := prometheus.NewPedanticRegistry()
	both.MustRegister(c, plain)
	gathered, err := both.Gather()
	if err != nil {
		t.Fatal(err)
	}
	h := HandlerOf(rest, c)
	for _, encoding := range []string{"", "gzip", "deflate, gzip;q=0.5", "gzip;q=0"} {
		t.Run(encoding, func(t *testing.T) {
			w, text := serve(t, h, encoding)
			if w.Code != http.StatusOK || w.Header().Get("Content-Type") != contentType {
				t.Fatalf("status %d, Content-Type %q", w.Code, w.Header().Get("Content-Type"))
			}
			if gzipped, want := w.Header().Get("Content-Encoding") == "gzip", strings.Contains(encoding, "gzip") && encoding != "gzip;q=0"; gzipped != want {
				t.Errorf("Accept-Encoding %q: gzipped %t", encoding, gzipped)
			}
			got := parse(t, text)
			if len(got) != len(gathered) {
				t.Errorf("%d families, want %d:\n%s", len(got), len(gathered), text)
			}
			for _, want := range gathered {
				if !sameFamily(got[want.GetName()], want) {
					t.Errorf("family %s:\n%v\nwant\n%v", want.GetName(), got[want.GetName()], want)
				}
			}
		})
	}
}

// sameFamily compares what a scrape says of a family with a registry's (NaN equal to NaN).
func sameFamily(got, want *dto.MetricFamily) bool {
	if got == nil || got.GetHelp() != want.GetHelp() || got.GetType() != want.GetType() || len(got.Metric) != len(want.Metric) {
		return false
	}
	for i, m := range want.Metric {
		g := got.Metric[i]
		if !proto.Equal(&dto.Metric{Label: g.Label}, &dto.Metric{Label: m.Label}) {
			return false
		}
		gv, wv := g.GetGauge().GetValue()+g.GetCounter().GetValue(), m.GetGauge().GetValue()+m.GetCounter().GetValue()
		if gv != wv && !(math.IsNaN(gv) && math.IsNaN(wv)) {
			return false
		}
	}
	return true
}

// A series that would make the scrape invalid is left out, and the rest is served: values
// that do not fit the family, a value not UTF-8, a family its collector does not describe, a
// family given again after another's series.
func TestASeriesThatWouldMakeTheScrapeInvalidIsLeftOut(t *testing.T) {
	undescribed := NewFamily("test_undescribed", "U.", prometheus.GaugeValue, nil, nil)
	c := &testCollector{families: []*Family{members, replaced}, series: []testSeries{
		{members, 3, []string{"ns", "one", "desired"}},
		{members, 1, []string{"ns", "one"}},
		{members, 1, []string{"ns", "one", "\xff"}},
		{undescribed, 1, nil},
		{replaced, 1, []string{"one"}},
		{members, 2, []string{"ns", "two", "desired"}},
	}}
	_, text := serve(t, HandlerOf(prometheus.NewRegistry(), c), "")
	got := parse(t, text)
	want := "# HELP test_members Members of a cluster,\\nby state (a \\\\ in help).\n# TYPE test_members gauge\n" +
		`test_members{name="one",namespace="ns",operator="test",state="desired"} 3` + "\n" +
		"# HELP test_replaced_total Replaced.\n# TYPE test_replaced_total counter\n" +
		`test_replaced_total{name="one"} 1` + "\n"
	if text != want {
		t.Errorf("scrape\n%s\nwant\n%s", text, want)
	}
	if len(got) != 2 {
		t.Errorf("families %v", got)
	}
}

type failing struct{}

func (failing) Gather() ([]*dto.MetricFamily, error) { return nil, errors.New("a collector failed") }

// A scrape whose registry fails to gather is an error, as promhttp's HTTPErrorOnError serves it.
func TestAScrapeWhoseRegistryFailsIsAnError(t *testing.T) {
	w, text := serve(t, HandlerOf(failing{}), "gzip")
	if w.Code != http.StatusInternalServerError || !strings.Contains(text, "a collector failed") {
		t.Errorf("status %d, body %q", w.Code, text)
	}
}

// The families of a scrape, parsed, are what Families returns.
func TestFamiliesParsesAScrape(t *testing.T) {
	rest := prometheus.NewRegistry()
	rest.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "test_families", Help: "F."}))
	families, err := Families(rest)
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := families["test_families"]; !ok || len(f.Metric) != 1 {
		t.Errorf("families %v", families)
	}
}
