package manager

import (
	"net/http"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/quintet-operators/quintet/shared/internal/exposition"
)

// metricsFilters is the metrics server's FilterProvider: scrapes written by internal/exposition
// one at a time, behind the API server's authentication and authorization when the
// metrics are served securely (so a request that is refused never waits for a turn).
//
// The server passes its /metrics handler (promhttp's, of controller-runtime's registry) through
// the filter, and serves no other path (the manager gives it no ExtraHandlers). The filter
// serves /metrics with exposition.Handler of the same registry instead: it writes the series of
// shared/status's collectors (every object's conditions and gauges) as it reads them, where
// promhttp built a message for each of them and held them all until the last was written.
func metricsFilters(secure bool) func(*rest.Config, *http.Client) (metricsserver.Filter, error) {
	return func(c *rest.Config, hc *http.Client) (metricsserver.Filter, error) {
		var auth metricsserver.Filter
		if secure {
			var err error
			if auth, err = filters.WithAuthenticationAndAuthorization(c, hc); err != nil {
				return nil, err
			}
		}
		return func(log logr.Logger, h http.Handler) (http.Handler, error) {
			h = oneScrapeAtATime(servingMetrics(h, exposition.Handler(ctrlmetrics.Registry)))
			if auth == nil {
				return h, nil
			}
			return auth(log, h)
		}, nil
	}
}

// servingMetrics is metrics on /metrics, and h on any other path.
func servingMetrics(h, metrics http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			metrics.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// oneScrapeAtATime serves one request at a time; the others wait for their turn until their
// client gives up, and one whose client gave up while it waited is not served at all.
//
// controller-runtime's handler builds every scrape it is asked for at once, and finishes
// building one whose client has gone: a scrape of a thousand objects is about 8 MB of heap,
// and a scraper that times out before a slow manager answers (one short of memory) asks again
// and again, until the scrapes piled up in the heap have the kernel kill the manager. Waiting
// costs a goroutine and a connection, not a scrape.
func oneScrapeAtATime(h http.Handler) http.Handler {
	turn := make(chan struct{}, 1)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case turn <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		defer func() { <-turn }()
		if r.Context().Err() != nil {
			return
		}
		h.ServeHTTP(w, r)
	})
}
