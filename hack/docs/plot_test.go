package main

import (
	"encoding/xml"
	"slices"
	"strings"
	"testing"
)

const kreFigures = "run\treq/s\tp50 (ms)\n" +
	"keeping results, 1 client\t152\t6.47\n" +
	"NATS alone, 1 client\t1012\t0.97\n"

func TestPlotDrawsABarPerRunInAPanelPerMetric(t *testing.T) {
	f, err := ReadFigures(strings.NewReader(kreFigures))
	if err != nil {
		t.Fatal(err)
	}
	svg := string(Plot("kre <bench>", f))
	if got := strings.Count(svg, "<rect x="); got != 4 {
		t.Errorf("%d bars, want 2 runs × 2 metrics", got)
	}
	expectWellFormedWith(t, svg, "kre &lt;bench&gt;", "req/s", "p50 (ms)", "NATS alone, 1 client", ">1012<", ">6.47<", ">0.97<",
		`width="420.0"`) // the largest value of a metric spans the bar area
}

// expectWellFormedWith fails t unless svg is well-formed XML holding each of wants.
func expectWellFormedWith(t *testing.T, svg string, wants ...string) {
	t.Helper()
	if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
		t.Fatalf("not well-formed XML: %v", err)
	}
	for _, want := range wants {
		if !strings.Contains(svg, want) {
			t.Errorf("no %q in the plot", want)
		}
	}
}

func TestReadFiguresRefusesWhatIsNotANumber(t *testing.T) {
	for name, in := range map[string]string{
		"no rows":         "run\treq/s\n",
		"a word":          "run\treq/s\na\tfast\n",
		"a missing value": "run\treq/s\tp50\na\t1\n",
	} {
		if _, err := ReadFigures(strings.NewReader(in)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

const scaleFigures = "operator, objects\tRSS (MiB)\tsettled (s)\n" +
	"gordon, 100\t67\t6.6\n" +
	"gordon, 1000\t107\t58.7\n" +
	"kre-runtime, 100\t82\t11.9\n" +
	"kre-runtime, 300\t122\t36.9\n" +
	"kre-runtime, 1000\t249\t58.5\n"

func TestPlotLinesDrawsALinePerSeriesAgainstItsCount(t *testing.T) {
	f, err := ReadFigures(strings.NewReader(scaleFigures))
	if err != nil {
		t.Fatal(err)
	}
	all, ok := seriesOf(f)
	if !ok || len(all) != 2 || len(all[1].x) != 3 {
		t.Fatalf("series %+v (%t), want gordon with 2 counts and kre-runtime with 3", all, ok)
	}
	svg := string(PlotLines("scale", f, all))
	if got := strings.Count(svg, "<polyline "); got != 4 {
		t.Errorf("%d lines, want 2 series × 2 metrics", got)
	}
	if got := strings.Count(svg, "<circle "); got != 10 {
		t.Errorf("%d points, want 5 runs × 2 metrics", got)
	}
	// kre-runtime's 1000 is the largest RSS: the chart's right end (70 + 480) at its top (34 + 28).
	expectWellFormedWith(t, svg, "RSS (MiB)", "settled (s)", ">kre-runtime 249<", ">gordon 58.7<", ">1000<", ">300<", `550.0,62.0`)
}

func TestSeriesOfWantsEveryRunNamedWithACount(t *testing.T) {
	for name, in := range map[string]string{
		"a run without a count": "run\tv\ngordon, 100\t1\ngordon, no client limit\t2\n",
		"one count per name":    "run\tv\ngordon, 100\t1\nkre-runtime, 100\t2\n",
	} {
		f, err := ReadFigures(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := seriesOf(f); ok {
			t.Errorf("%s: drawn as lines", name)
		}
	}
}

func TestSpreadApartKeepsLabelsAGapApart(t *testing.T) {
	got := spreadApart([]float64{100, 50, 105, 200}, 14, 300)
	want := []float64{100, 50, 114, 200}
	if !slices.Equal(got, want) {
		t.Errorf("spreadApart = %v, want %v", got, want)
	}
	// Three at the bottom: spread down past it, then moved up together.
	got = spreadApart([]float64{300, 300, 300}, 14, 300)
	want = []float64{272, 286, 300}
	if !slices.Equal(got, want) {
		t.Errorf("spreadApart at the bottom = %v, want %v", got, want)
	}
}
