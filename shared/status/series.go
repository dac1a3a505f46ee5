package status

import (
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Sample is one gauge series an object's status gives: the gauge, its label values, its value.
type Sample struct {
	Gauge  *prometheus.GaugeVec
	Labels []string
	Value  float64
}

func (s Sample) sameSeries(o Sample) bool {
	return s.Gauge == o.Gauge && slices.Equal(s.Labels, o.Labels)
}

// Series exports what each object's status says as gauges, and remembers which series it set
// for each object (key K), so that a series the object no longer gives (a member removed, a
// condition gone) is dropped without a moment in which a scrape sees none of the others, and
// Forget drops them all when the object is gone.
type Series[K comparable] struct {
	mu       sync.Mutex
	byObject map[K][]Sample
}

// Set sets the object's samples and drops the series it gave before and does not now.
func (s *Series[K]) Set(key K, samples []Sample) {
	for _, x := range samples {
		x.Gauge.WithLabelValues(x.Labels...).Set(x.Value)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, old := range s.byObject[key] {
		if !slices.ContainsFunc(samples, old.sameSeries) {
			old.Gauge.DeleteLabelValues(old.Labels...)
		}
	}
	if s.byObject == nil {
		s.byObject = map[K][]Sample{}
	}
	s.byObject[key] = samples
}

// Forget drops every series of an object that is gone.
func (s *Series[K]) Forget(key K) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, old := range s.byObject[key] {
		old.Gauge.DeleteLabelValues(old.Labels...)
	}
	delete(s.byObject, key)
}
