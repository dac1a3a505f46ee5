package exposition

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// collectors are the collectors a manager's scrape writes itself, as registered.
var collectors = newCollectorSet()

// MustRegister adds cs to every scrape the Handler serves. As a registry's MustRegister, it
// panics when a family is registered twice.
func MustRegister(cs ...Collector) { collectors.mustRegister(cs...) }

// collectorSet is a list of collectors, each with the families it describes; a prometheus
// Registry of them refuses a family registered twice.
type collectorSet struct {
	mu       sync.Mutex
	registry *prometheus.Registry
	list     []registered
}

type registered struct {
	Collector
	families map[*prometheus.Desc]bool
}

func newCollectorSet() *collectorSet { return &collectorSet{registry: prometheus.NewRegistry()} }

func (s *collectorSet) mustRegister(cs ...Collector) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cs {
		s.registry.MustRegister(c)
		r := registered{Collector: c, families: map[*prometheus.Desc]bool{}}
		ch := make(chan *prometheus.Desc)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			r.families[d] = true
		}
		s.list = append(s.list, r)
	}
}

func (s *collectorSet) all() []registered {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.list
}
