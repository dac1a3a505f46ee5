package status

import "github.com/prometheus/client_golang/prometheus"

// The labels of the object every series is about.
const namespaceLabel, nameLabel = "namespace", "name"

// Counter counts what happens to each object (labels namespace and name), by one label of a
// few values when it has one. Start gives an object's series at 0 for every value, so that the
// first event of each shows as an increase (rate and increase see nothing of a series born at
// 1); Forget drops them when the object is gone. Register it as the CounterVec it embeds.
type Counter struct {
	*prometheus.CounterVec
	values []string
}

// NewCounter is a Counter with labels namespace, name and, unless label is empty, label with
// the given values.
func NewCounter(opts prometheus.CounterOpts, label string, values ...string) *Counter {
	labels := []string{namespaceLabel, nameLabel}
	if label != "" {
		labels = append(labels, label)
	}
	return &Counter{CounterVec: prometheus.NewCounterVec(opts, labels), values: values}
}

// Start makes the object's series, at 0 where they did not exist.
func (c *Counter) Start(namespace, name string) {
	if len(c.values) == 0 {
		c.WithLabelValues(namespace, name)
		return
	}
	for _, v := range c.values {
		c.WithLabelValues(namespace, name, v)
	}
}

// Of is the object's series, for value when the counter has a label.
func (c *Counter) Of(namespace, name string, value ...string) prometheus.Counter {
	return c.WithLabelValues(append([]string{namespace, name}, value...)...)
}

// Forget drops every series of the object.
func (c *Counter) Forget(namespace, name string) {
	c.DeletePartialMatch(prometheus.Labels{namespaceLabel: namespace, nameLabel: name})
}
