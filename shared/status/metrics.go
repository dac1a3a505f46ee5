package status

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/internal/exposition"
)

// conditionStatuses are the values a condition's status takes; each has a series.
var conditionStatuses = []string{"True", "False", "Unknown"}

// conditionDesc says every condition of every object the operators reconcile, as
// kube-state-metrics says a pod's: 1 on the series of its current status, 0 on the other two,
// so that `quintet_resource_condition{type="Ready",status="True"} == 0` finds what is not
// Ready. Its labels are bounded: the object, the condition type, three statuses.
var conditionFamily = exposition.NewFamily("quintet_resource_condition",
	"A condition of a custom resource: 1 for its current status (True, False or Unknown), 0 for the other two.",
	prometheus.GaugeValue, []string{"kind", namespaceLabel, nameLabel, "type", "status"}, nil)

// conditionCollector is the collector of quintet_resource_condition: at each scrape it reads the
// objects of every kind exported (ExportConditions) from their manager's cache. It keeps no
// series between scrapes: at 1000 objects a gauge per series held about 10 MB of label sets.
var conditionCollector = &conditionsCollector{sources: map[*conditionSource]struct{}{}}

func init() { MustRegister(conditionCollector) }

// collectTimeout bounds a scrape's wait for a cache that has not synced yet.
const collectTimeout = 5 * time.Second

// ExportConditions exports the conditions of every object of list's kind in mgr's cache as
// quintet_resource_condition{kind=kind}, while mgr leads (a standby replica exports none, so
// each object has one set of series). manages, when not nil, picks the objects this manager
// acts on (etcd-cluster's namespaced and cluster-wide managers share a kind). The series are
// read from the cache at each scrape, so an object deleted has none and nothing is forgotten.
func ExportConditions(mgr manager.Manager, kind string, list client.ObjectList, manages func(client.Object) bool) error {
	return mgr.Add(&conditionSource{kind: kind, reader: mgr.GetCache(), list: list, manages: manages})
}

// conditionSource is one manager's kind, a Runnable that is exported from the time its manager
// leads until it stops.
type conditionSource struct {
	kind    string
	reader  client.Reader
	list    client.ObjectList
	manages func(client.Object) bool
}

func (s *conditionSource) NeedLeaderElection() bool { return true }

func (s *conditionSource) Start(ctx context.Context) error {
	conditionCollector.add(s)
	defer conditionCollector.remove(s)
	<-ctx.Done()
	return nil
}

// eachSeries gives the series of the source's objects not already seen (by another manager of
// the same process: tests run two), through values, which it reuses.
func (s *conditionSource) eachSeries(emit func(*exposition.Family, float64, []string), values []string, seen map[conditionKey]bool) {
	ctx, cancel := context.WithTimeout(context.Background(), collectTimeout)
	defer cancel()
	list := s.list.DeepCopyObject().(client.ObjectList)
	if err := s.reader.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		logf.Log.WithName("condition-metrics").Error(err, "Listing objects for their conditions", "kind", s.kind)
		return
	}
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		obj, ok := o.(interface {
			conditions.Object
			client.Object
		})
		if !ok || (s.manages != nil && !s.manages(obj)) {
			return nil
		}
		key := conditionKey{s.kind, obj.GetNamespace(), obj.GetName()}
		if seen[key] {
			return nil
		}
		seen[key] = true
		values[0], values[1], values[2] = s.kind, key.namespace, key.name
		for _, c := range obj.GetConditions() {
			values[3] = c.Type
			for _, st := range conditionStatuses {
				value := 0.0
				if string(c.Status) == st {
					value = 1
				}
				values[4] = st
				emit(conditionFamily, value, values)
			}
		}
		return nil
	})
}

type conditionKey struct{ kind, namespace, name string }

type conditionsCollector struct {
	mu      sync.Mutex
	sources map[*conditionSource]struct{}
}

func (c *conditionsCollector) add(s *conditionSource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sources[s] = struct{}{}
}

func (c *conditionsCollector) remove(s *conditionSource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.sources, s)
}

func (c *conditionsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- conditionFamily.Desc }

func (c *conditionsCollector) Collect(ch chan<- prometheus.Metric) { collect(c, ch) }

func (c *conditionsCollector) EachSeries(emit func(f *exposition.Family, value float64, values []string)) {
	c.mu.Lock()
	sources := make([]*conditionSource, 0, len(c.sources))
	for s := range c.sources {
		sources = append(sources, s)
	}
	c.mu.Unlock()
	seen, values := map[conditionKey]bool{}, make([]string, 5)
	for _, s := range sources {
		s.eachSeries(emit, values, seen)
	}
}
