//go:build bench

package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// scraper scrapes the manager's metrics as a Prometheus would, one scrape every interval that
// gives up after timeout, until stopped: a manager short of memory answers slowly, and how it
// copes with scrapes that time out is part of what a limit costs.
type scraper struct {
	answered, failed atomic.Int64
	done             chan struct{}
	wg               sync.WaitGroup
}

// startScraper starts scraping the bench manager as BENCH_SCALE_SCRAPE says ("interval/timeout",
// 5s/3s: more eager than Prometheus's defaults, 30s/10s, so that a slow manager's scrapes
// outlast their timeout; "off": none).
func startScraper(t *testing.T) *scraper {
	s := &scraper{done: make(chan struct{})}
	setting := envOr("BENCH_SCALE_SCRAPE", "5s/3s")
	if setting == "off" {
		return s
	}
	every, timeout, err := scrapeSetting(setting)
	if err != nil {
		t.Fatalf("BENCH_SCALE_SCRAPE: %v", err)
	}
	hc := &http.Client{Timeout: timeout}
	s.wg.Go(func() {
		for tick := time.NewTicker(every); ; {
			select {
			case <-s.done:
				tick.Stop()
				return
			case <-tick.C:
			}
			if _, err := scrapeAt(hc, benchMetrics); err != nil {
				s.failed.Add(1)
			} else {
				s.answered.Add(1)
			}
		}
	})
	return s
}

// scrapeSetting parses "interval/timeout".
func scrapeSetting(setting string) (every, timeout time.Duration, err error) {
	a, b, ok := strings.Cut(setting, "/")
	if !ok {
		return 0, 0, fmt.Errorf("%q is not interval/timeout (5s/3s) or off", setting)
	}
	if every, err = time.ParseDuration(a); err == nil {
		timeout, err = time.ParseDuration(b)
	}
	if err == nil && (every <= 0 || timeout <= 0) {
		err = fmt.Errorf("%q: the interval and the timeout must be positive", setting)
	}
	return every, timeout, err
}

// counts are the scrapes answered and failed so far.
func (s *scraper) counts() scrapeCounts {
	return scrapeCounts{s.answered.Load(), s.failed.Load()}
}

// stop ends the scraping.
func (s *scraper) stop() {
	close(s.done)
	s.wg.Wait()
}

// scrapeCounts are scrapes answered and failed (a timeout, a refused connection, an error).
type scrapeCounts struct{ answered, failed int64 }

func (c scrapeCounts) sub(before scrapeCounts) scrapeCounts {
	return scrapeCounts{c.answered - before.answered, c.failed - before.failed}
}

func (c scrapeCounts) String() string {
	return fmt.Sprintf("%d answered, %d failed", c.answered, c.failed)
}
