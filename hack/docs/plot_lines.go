package main

import (
	"bytes"
	"cmp"
	"fmt"
	"html"
	"slices"
	"strconv"
	"strings"
)

// series are runs named "NAME, X" (X a number, as "gordon, 1000"): the runs of one NAME are
// one line against X.
type series struct {
	name string
	x    []float64
	runs []int // rows of Figures.Values, in order of x
}

// seriesOf groups f's runs by NAME when every run is named "NAME, X" and some NAME has two X
// or more; otherwise there is nothing to draw as lines.
func seriesOf(f *Figures) ([]series, bool) {
	var all []series
	lines := false
	for r, run := range f.Runs {
		name, xText, ok := strings.Cut(run, ", ")
		x, err := strconv.ParseFloat(xText, 64)
		if !ok || err != nil {
			return nil, false
		}
		i := slices.IndexFunc(all, func(s series) bool { return s.name == name })
		if i < 0 {
			all, i = append(all, series{name: name}), len(all)
		}
		all[i].x, all[i].runs = append(all[i].x, x), append(all[i].runs, r)
		lines = lines || len(all[i].x) > 1
	}
	return all, lines
}

// Line plot layout, in SVG user units: the chart's box in each panel, and the labels right of it.
const (
	chartLeft   = 70
	chartWidth  = 480
	chartHeight = 160
	lineLabelX  = chartLeft + chartWidth + 12
	linePanel   = panelHeader + chartHeight + 40
	labelGap    = 14 // the least vertical distance between two line labels
)

// PlotLines draws f as an SVG of one panel per metric, a line per series against X, each
// ending in its name and last value. Both axes start at zero, X ticks at every X measured.
func PlotLines(title string, f *Figures, all []series) []byte {
	var b bytes.Buffer
	startSVG(&b, title, titleHeight+len(f.Metrics)*linePanel)
	var xs []float64
	for _, s := range all {
		xs = append(xs, s.x...)
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	mostX := xs[len(xs)-1]
	for m, metric := range f.Metrics {
		top := titleHeight + m*linePanel
		bottom := float64(top + panelHeader + chartHeight)
		fmt.Fprintf(&b, `<text x="10" y="%d" font-weight="bold">%s</text>`+"\n", top+18, html.EscapeString(metric))
		most := f.most(m)
		px := func(x float64) float64 { return chartLeft + x/mostX*chartWidth }
		py := func(v float64) float64 {
			if most == 0 {
				return bottom
			}
			return bottom - v/most*chartHeight
		}
		fmt.Fprintf(&b, `<path d="M%d %.1fH%d M%d %.1fV%d" stroke="#999" fill="none"/>`+"\n", // the axes
			chartLeft, bottom, chartLeft+chartWidth, chartLeft, bottom, top+panelHeader)
		ticks := []float64{0}
		if most > 0 {
			ticks = append(ticks, most/2, most)
		}
		for _, v := range ticks {
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", chartLeft-6, py(v)+4, formatValue(v))
		}
		for _, x := range xs {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", px(x), bottom+16, formatValue(x))
		}
		labels, last := make([]float64, len(all)), make([]float64, len(all)) // each line's label height, and its last value
		for i, s := range all {
			points := make([]string, len(s.runs))
			for j, r := range s.runs {
				x, y := px(s.x[j]), py(f.Values[r][m])
				points[j] = fmt.Sprintf("%.1f,%.1f", x, y)
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", x, y, colour(i))
			}
			fmt.Fprintf(&b, `<polyline points="%s" stroke="%s" stroke-width="2" fill="none"/>`+"\n", strings.Join(points, " "), colour(i))
			last[i] = f.Values[s.runs[len(s.runs)-1]][m]
			labels[i] = py(last[i]) + 4
		}
		for i, y := range spreadApart(labels, labelGap, bottom+4) {
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" fill="%s">%s %s</text>`+"\n", lineLabelX, y, colour(i),
				html.EscapeString(all[i].name), formatValue(last[i]))
		}
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// spreadApart moves the heights ys down, in their order from the top, until any two are at
// least gap apart, then all of them up as far as the lowest went past lowest: labels of lines
// ending close together stay readable, and within their panel.
func spreadApart(ys []float64, gap, lowest float64) []float64 {
	order := make([]int, len(ys))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ys[a], ys[b]) })
	out := slices.Clone(ys)
	for k := 1; k < len(order); k++ {
		out[order[k]] = max(out[order[k]], out[order[k-1]]+gap)
	}
	if past := out[order[len(order)-1]] - lowest; past > 0 {
		for i := range out {
			out[i] -= past
		}
	}
	return out
}
