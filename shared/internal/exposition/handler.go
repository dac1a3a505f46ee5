package exposition

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// Handler serves a scrape in Prometheus's text format, gzipped when the client accepts it:
// the families rest gathers (controller-runtime's registry: its own, client-go's, Go's and the
// operators' plain vectors), then the series of every registered Collector, each line written
// as it is read. The compressor and the buffer of one scrape are kept for the next.
func Handler(rest prometheus.Gatherer) http.Handler {
	return &handler{rest: rest, collectors: collectors}
}

// HandlerOf is a Handler of cs in place of the registered collectors (for tests and benchmarks).
func HandlerOf(rest prometheus.Gatherer, cs ...Collector) http.Handler {
	set := newCollectorSet()
	set.mustRegister(cs...)
	return &handler{rest: rest, collectors: set}
}

type handler struct {
	rest       prometheus.Gatherer
	collectors *collectorSet
	mu         sync.Mutex
	kept       *writers // nil while a scrape uses them
}

// writers are a scrape's buffer and compressor.
type writers struct {
	buffer *bufio.Writer
	gzip   *gzip.Writer
}

// contentType is the text format's, as promhttp says it.
var contentType = string(expfmt.NewFormat(expfmt.TypeTextPlain))

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	families, err := h.rest.Gather()
	if err != nil { // as promhttp's HTTPErrorOnError, which controller-runtime serves with
		http.Error(w, "An error has occurred while gathering metrics:\n\n"+err.Error(), http.StatusInternalServerError)
		return
	}
	ws := h.take()
	defer h.give(ws)
	w.Header().Set("Content-Type", contentType)
	out := io.Writer(w)
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		w.Header().Set("Content-Encoding", "gzip")
		ws.gzip.Reset(w)
		out = ws.gzip
	}
	ws.buffer.Reset(out)
	if err := h.write(ws.buffer, families); err != nil {
		logf.Log.WithName("metrics").Error(err, "Writing a scrape") // the client is gone, mostly
		return
	}
	if out == ws.gzip {
		_ = ws.gzip.Close()
	}
}

// write writes families, then the collectors' series, and flushes.
func (h *handler) write(w *bufio.Writer, families []*dto.MetricFamily) error {
	for _, f := range families {
		if _, err := expfmt.MetricFamilyToText(w, f); err != nil {
			return err
		}
	}
	t := newTextWriter(w)
	for _, c := range h.collectors.all() {
		t.collector(c)
	}
	if t.left > 0 {
		logf.Log.WithName("metrics").Error(t.reason, "Series left out of a scrape", "series", t.left)
	}
	return w.Flush()
}

func (h *handler) take() *writers {
	h.mu.Lock()
	ws := h.kept
	h.kept = nil
	h.mu.Unlock()
	if ws == nil {
		ws = &writers{buffer: bufio.NewWriterSize(nil, 32<<10), gzip: gzip.NewWriter(nil)}
	}
	return ws
}

func (h *handler) give(ws *writers) {
	ws.buffer.Reset(nil)
	ws.gzip.Reset(nil)
	h.mu.Lock()
	h.kept = ws
	h.mu.Unlock()
}

// acceptsGzip: the Accept-Encoding header names gzip, with a weight above 0 if it gives one.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			q, err := strconv.ParseFloat(v, 64)
			return err == nil && q > 0
		}
		return true
	}
	return false
}

// Families is what a scrape of Handler(rest) says, parsed as Prometheus parses it (names as
// its legacy validation wants them): tests read the series the metrics endpoint serves.
func Families(rest prometheus.Gatherer) (map[string]*dto.MetricFamily, error) {
	h := &handler{rest: rest, collectors: collectors}
	families, err := rest.Gather()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	if err := h.write(w, families); err != nil {
		return nil, err
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	parsed, err := parser.TextToMetricFamilies(&b)
	if err != nil {
		return nil, fmt.Errorf("parsing a scrape: %w", err)
	}
	return parsed, nil
}
