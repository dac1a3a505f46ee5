package exposition

import (
	"bufio"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// textWriter writes the series of collectors in Prometheus's text format (version 0.0.4), one
// line each as it is given. A series that would make the scrape invalid (it does not fit its
// family, its family is not one its collector describes, or its family was written already
// and another since) is left out, and counted.
type textWriter struct {
	w        *bufio.Writer
	families map[*Family]bool // written, the current one included
	current  *Family
	scratch  []byte
	left     int   // series left out
	reason   error // why the first was
}

func newTextWriter(w *bufio.Writer) *textWriter {
	return &textWriter{w: w, families: map[*Family]bool{}}
}

// collector writes c's series.
func (t *textWriter) collector(c registered) {
	c.EachSeries(func(f *Family, value float64, values []string) {
		if err := t.check(c, f, values); err != nil {
			t.leaveOut(err)
			return
		}
		t.series(f, value, values)
	})
}

func (t *textWriter) check(c registered, f *Family, values []string) error {
	if f != t.current {
		if !c.families[f.Desc] {
			return fmt.Errorf("%s is not a family its collector describes", f.name)
		}
		if t.families[f] {
			return fmt.Errorf("%s: a series after those of another family", f.name)
		}
	}
	return f.Check(values)
}

func (t *textWriter) leaveOut(err error) {
	if t.left == 0 {
		t.reason = err
	}
	t.left++
}

func (t *textWriter) series(f *Family, value float64, values []string) {
	if f != t.current {
		t.header(f)
	}
	w := t.w
	_, _ = w.WriteString(f.name)
	for i, l := range f.Labels {
		if i == 0 {
			_ = w.WriteByte('{')
		} else {
			_ = w.WriteByte(',')
		}
		_, _ = w.WriteString(l.Name)
		_, _ = w.WriteString(`="`)
		v := l.Constant
		if l.Index >= 0 {
			v = values[l.Index]
		}
		writeEscaped(w, v, true)
		_ = w.WriteByte('"')
	}
	if len(f.Labels) > 0 {
		_ = w.WriteByte('}')
	}
	_ = w.WriteByte(' ')
	t.scratch = appendFloat(t.scratch[:0], value)
	_, _ = w.Write(t.scratch)
	_ = w.WriteByte('\n')
}

func (t *textWriter) header(f *Family) {
	t.current = f
	t.families[f] = true
	w := t.w
	_, _ = w.WriteString("# HELP ")
	_, _ = w.WriteString(f.name)
	_ = w.WriteByte(' ')
	writeEscaped(w, f.help, false)
	_, _ = w.WriteString("\n# TYPE ")
	_, _ = w.WriteString(f.name)
	if f.kind == prometheus.CounterValue {
		_, _ = w.WriteString(" counter\n")
	} else {
		_, _ = w.WriteString(" gauge\n")
	}
}

// writeEscaped writes s escaped as the text format wants a help text (backslash and line feed)
// or, with quote, a label value (and the double quote).
func writeEscaped(w *bufio.Writer, s string, quote bool) {
	special := "\\\n"
	if quote {
		special = "\\\n\""
	}
	if !strings.ContainsAny(s, special) {
		_, _ = w.WriteString(s)
		return
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			_, _ = w.WriteString(`\\`)
		case c == '\n':
			_, _ = w.WriteString(`\n`)
		case c == '"' && quote:
			_, _ = w.WriteString(`\"`)
		default:
			_ = w.WriteByte(c)
		}
	}
}

// appendFloat appends f as the text format writes a value.
func appendFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "+Inf"...)
	case math.IsInf(f, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}
