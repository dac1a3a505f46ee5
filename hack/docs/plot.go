package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"html"
	"io"
	"strconv"
	"strings"
)

// Figures are a benchmark's figures as it writes them: tab-separated, a header row, the first
// column naming each run and every other column a metric, `name (unit)`.
type Figures struct {
	Metrics []string
	Runs    []string
	// Values[r][m] is run r's value of metric m.
	Values [][]float64
}

// ReadFigures reads a benchmark's TSV.
func ReadFigures(r io.Reader) (*Figures, error) {
	in := csv.NewReader(r)
	in.Comma, in.Comment = '\t', '#'
	rows, err := in.ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) < 2 || len(rows[0]) < 2 {
		return nil, errors.New("figures: want a header and a row, with a run's name and a metric at least")
	}
	f := &Figures{Metrics: rows[0][1:]}
	for _, row := range rows[1:] {
		values := make([]float64, len(f.Metrics))
		for i := range values {
			v, err := strconv.ParseFloat(row[i+1], 64)
			if err != nil {
				return nil, fmt.Errorf("figures: %s, %s: %w", row[0], f.Metrics[i], err)
			}
			values[i] = v
		}
		f.Runs, f.Values = append(f.Runs, row[0]), append(f.Values, values)
	}
	return f, nil
}

// Plot layout, in SVG user units.
const (
	plotWidth   = 760
	labelWidth  = 230
	barArea     = 420
	barHeight   = 18
	rowGap      = 6
	panelHeader = 28
	panelGap    = 14
	titleHeight = 34
)

// colours tell runs (bars) or series (lines) apart, the same in every panel.
var colours = []string{"#2f6fb0", "#e08a2c", "#3d9a5b", "#b54a4a", "#7b5ea7", "#6b6b6b"}

// colour is run or series i's colour.
func colour(i int) string { return colours[i%len(colours)] }

// Plot draws f as an SVG: under title, one panel per metric, a horizontal bar per run, each
// labelled with its value. Bars start at zero: ratios read off the lengths.
func Plot(title string, f *Figures) []byte {
	var b bytes.Buffer
	panel := panelHeader + len(f.Runs)*(barHeight+rowGap) + panelGap
	startSVG(&b, title, titleHeight+len(f.Metrics)*panel)
	for m, metric := range f.Metrics {
		top := titleHeight + m*panel
		fmt.Fprintf(&b, `<text x="10" y="%d" font-weight="bold">%s</text>`+"\n", top+18, html.EscapeString(metric))
		most := f.most(m)
		for r, run := range f.Runs {
			y := top + panelHeader + r*(barHeight+rowGap)
			length := 0.0
			if most > 0 {
				length = f.Values[r][m] / most * barArea
			}
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", labelWidth-8, y+barHeight-4, html.EscapeString(run))
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", labelWidth, y, length, barHeight, colour(r))
			fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text>`+"\n", float64(labelWidth)+length+6, y+barHeight-4, formatValue(f.Values[r][m]))
		}
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// startSVG opens an SVG of the plots' width and height on white, with title on top.
func startSVG(b *bytes.Buffer, title string, height int) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="13">`+"\n",
		plotWidth, height, plotWidth, height)
	fmt.Fprintf(b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(b, `<text x="10" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
}

// most is the largest value of metric m over the runs, at least 0.
func (f *Figures) most(m int) float64 {
	most := 0.0
	for _, v := range f.Values {
		most = max(most, v[m])
	}
	return most
}

// formatValue writes v with as many decimals as it needs to read, and no more.
func formatValue(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strings.TrimSuffix(strings.TrimRight(strconv.FormatFloat(v, 'f', 2, 64), "0"), ".")
	}
}
