package status

import (
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quintet-operators/quintet/shared/internal/exposition"
)

// Gauge is a gauge whose series a Series holds: its name, help and labels.
type Gauge struct{ family *exposition.Family }

// NewGauge is the gauge opts names, with labels.
func NewGauge(opts prometheus.GaugeOpts, labels []string) *Gauge {
	name := prometheus.BuildFQName(opts.Namespace, opts.Subsystem, opts.Name)
	return &Gauge{family: exposition.NewFamily(name, opts.Help, prometheus.GaugeValue, labels, opts.ConstLabels)}
}

// Sample is one gauge series an object's status gives: the gauge, its label values, its value.
type Sample struct {
	Gauge  *Gauge
	Labels []string
	Value  float64
}

// Series exports what each object's status says as gauges, and is the Prometheus collector of
// those gauges (register it). It keeps each object's samples (key K) and nothing else: a
// series the object no longer gives (a member removed, a condition gone) is gone with the
// next Set, without a moment in which a scrape sees none of the others, and Forget drops them
// all when the object is gone. A GaugeVec child per series held its label pairs, hash and
// metric object: four gauges of 1000 objects took 1850 bytes per object, samples kept for the
// scrape to build 320 (BenchmarkSeriesHeap, one run).
type Series[K comparable] struct {
	gauges   []*Gauge
	mu       sync.Mutex
	byObject map[K][]Sample
}

// NewSeries holds the series of gauges; a Sample of another gauge is left out of a scrape
// (and fails a registry's Gather, as a test's).
func NewSeries[K comparable](gauges ...*Gauge) *Series[K] {
	return &Series[K]{gauges: gauges, byObject: map[K][]Sample{}}
}

// Set makes samples the object's series, in place of those it gave before.
func (s *Series[K]) Set(key K, samples []Sample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byObject[key] = samples
}

// Forget drops every series of an object that is gone.
func (s *Series[K]) Forget(key K) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byObject, key)
}

// Value is the value of gauge's series with labels, and whether an object gives it.
func (s *Series[K]) Value(gauge *Gauge, labels ...string) (float64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, samples := range s.byObject {
		for _, x := range samples {
			if x.Gauge == gauge && slices.Equal(x.Labels, labels) {
				return x.Value, true
			}
		}
	}
	return 0, false
}

func (s *Series[K]) Describe(ch chan<- *prometheus.Desc) {
	for _, g := range s.gauges {
		ch <- g.family.Desc
	}
}

func (s *Series[K]) Collect(ch chan<- prometheus.Metric) { collect(s, ch) }

// EachSeries gives every object's series, gauge by gauge, then any sample of a gauge the
// Series was not made with (left out of the scrape). The objects' samples are taken under the
// lock and given after it, so a slow scrape holds up no Set: Set replaces an object's samples,
// and nothing changes them once set.
func (s *Series[K]) EachSeries(emit func(f *exposition.Family, value float64, values []string)) {
	s.mu.Lock()
	objects := make([][]Sample, 0, len(s.byObject))
	for _, samples := range s.byObject {
		objects = append(objects, samples)
	}
	s.mu.Unlock()
	for _, g := range s.gauges {
		for _, samples := range objects {
			for _, x := range samples {
				if x.Gauge == g {
					emit(g.family, x.Value, x.Labels)
				}
			}
		}
	}
	for _, samples := range objects {
		for _, x := range samples {
			if !slices.Contains(s.gauges, x.Gauge) {
				emit(x.Gauge.family, x.Value, x.Labels)
			}
		}
	}
}
