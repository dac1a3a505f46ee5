package main

import (
	"encoding/xml"
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
	if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
		t.Fatalf("not well-formed XML: %v", err)
	}
	if got := strings.Count(svg, "<rect x="); got != 4 {
		t.Errorf("%d bars, want 2 runs × 2 metrics", got)
	}
	for _, want := range []string{"kre &lt;bench&gt;", "req/s", "p50 (ms)", "NATS alone, 1 client", ">1012<", ">6.47<", ">0.97<",
		`width="420.0"`} { // the largest value of a metric spans the bar area
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
