package status

import (
	"fmt"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quintet-operators/quintet/shared/internal/exposition"
)

// The labels of the object every series is about.
const namespaceLabel, nameLabel = "namespace", "name"

// Counter counts what happens to each object (labels namespace and name), by one label of a
// few values when it has one, and is the Prometheus collector of its series (register it).
// Start gives an object's series at 0 for every value, so that the first event of each shows
// as an increase (rate and increase see nothing of a series born at 1); Forget drops them when
// the object is gone. It keeps a number per series, and builds the series at each scrape.
type Counter struct {
	family *exposition.Family
	values []string
	mu     sync.Mutex
	counts map[objectKey][]float64
}

type objectKey struct{ namespace, name string }

// NewCounter is a Counter with labels namespace, name and, unless label is empty, label with
// the given values.
func NewCounter(opts prometheus.CounterOpts, label string, values ...string) *Counter {
	labels := []string{namespaceLabel, nameLabel}
	if label != "" {
		labels = append(labels, label)
	} else {
		values = nil
	}
	name := prometheus.BuildFQName(opts.Namespace, opts.Subsystem, opts.Name)
	return &Counter{family: exposition.NewFamily(name, opts.Help, prometheus.CounterValue, labels, opts.ConstLabels), values: values,
		counts: map[objectKey][]float64{}}
}

// Start makes the object's series, at 0 where they did not exist.
func (c *Counter) Start(namespace, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.countsOf(objectKey{namespace, name})
}

// Add adds n to the object's series, of value when the counter has a label (one of those it
// was made with).
func (c *Counter) Add(namespace, name string, n float64, value ...string) {
	i := c.index(value)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.countsOf(objectKey{namespace, name})[i] += n
}

// Value is the count of the object's series, of value when the counter has a label.
func (c *Counter) Value(namespace, name string, value ...string) float64 {
	i := c.index(value)
	c.mu.Lock()
	defer c.mu.Unlock()
	if counts, ok := c.counts[objectKey{namespace, name}]; ok {
		return counts[i]
	}
	return 0
}

// Forget drops every series of the object.
func (c *Counter) Forget(namespace, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.counts, objectKey{namespace, name})
}

func (c *Counter) Describe(ch chan<- *prometheus.Desc) { ch <- c.family.Desc }

func (c *Counter) Collect(ch chan<- prometheus.Metric) { collect(c, ch) }

// EachSeries gives every object's series. The counts are copied under the lock and given after
// it, so a slow scrape holds up no Add.
func (c *Counter) EachSeries(emit func(f *exposition.Family, value float64, values []string)) {
	type object struct {
		key    objectKey
		counts []float64
	}
	c.mu.Lock()
	objects := make([]object, 0, len(c.counts))
	for key, counts := range c.counts {
		objects = append(objects, object{key, slices.Clone(counts)})
	}
	c.mu.Unlock()
	values := make([]string, 2, 3)
	for _, o := range objects {
		values[0], values[1] = o.key.namespace, o.key.name
		if len(c.values) == 0 {
			emit(c.family, o.counts[0], values)
		}
		for i, v := range c.values {
			emit(c.family, o.counts[i], append(values, v))
		}
	}
}

// countsOf is the object's counts, made at 0 the first time. The caller holds mu.
func (c *Counter) countsOf(key objectKey) []float64 {
	counts, ok := c.counts[key]
	if !ok {
		counts = make([]float64, max(1, len(c.values)))
		c.counts[key] = counts
	}
	return counts
}

// index is the place of value's count: 0 without a label. A value the counter was not made
// with is a programming error, as a wrong label count is to a CounterVec.
func (c *Counter) index(value []string) int {
	if len(c.values) == 0 && len(value) == 0 {
		return 0
	}
	if len(value) == 1 {
		if i := slices.Index(c.values, value[0]); i >= 0 {
			return i
		}
	}
	panic(fmt.Sprintf("%s: no series for label value %q (values %q)", c.family.Desc, value, c.values))
}
