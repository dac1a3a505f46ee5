//go:build bench

package restapi

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/quintet-operators/quintet/shared/testenv"
)

// TestBenchRESTAPILatency measures what the REST API adds to a request: 1000 GETs of one
// Widget through the API (over HTTPS, as served) and 1000 straight to the API server, with the
// same ServiceAccount token, alternating; it prints p50 and p99 of each and the
// overhead. Run by `make bench-restapi`.
func TestBenchRESTAPILatency(t *testing.T) {
	const n = 1000
	ns := env.NewNamespace(t, "bench")
	token := env.Token(t, ns, "reader", widgetRules("get", "create"))
	do(t, "POST", widgetsPath(ns), token, jsonType, `{"metadata":{"name":"web"},"spec":{"widget":{"replicas":1}}}`).expect(t, http.StatusCreated)

	kinds, err := KindsFromCRDs(widgetCRDs)
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(env.Config, kinds, HandlerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	viaAPI := httptest.NewTLSServer(h)
	defer viaAPI.Close()
	direct, err := rest.HTTPClientFor(rest.AnonymousClientConfig(env.Config))
	if err != nil {
		t.Fatal(err)
	}
	path := "/namespaces/" + ns + "/widgets/web"
	through, straight := make([]time.Duration, 0, n), make([]time.Duration, 0, n)
	for range n { // alternating, so that both see the same machine
		through = append(through, timeGET(t, viaAPI.Client(), viaAPI.URL+"/api/v1"+path, token))
		straight = append(straight, timeGET(t, direct, strings.TrimSuffix(env.Config.Host, "/")+"/apis/test.quintet.dev/v1"+path, token))
	}
	slices.Sort(through)
	slices.Sort(straight)
	p := func(d []time.Duration, q float64) time.Duration {
		return d[int(q*float64(len(d)-1))].Round(time.Microsecond)
	}
	fmt.Printf("REST API latency, %d GETs of one Widget each way, same token\n", n)
	fmt.Printf("%-28s %10s %10s\n", "", "p50", "p99")
	fmt.Printf("%-28s %10v %10v\n", "API server directly", p(straight, 0.5), p(straight, 0.99))
	fmt.Printf("%-28s %10v %10v\n", "through the REST API", p(through, 0.5), p(through, 0.99))
	fmt.Printf("%-28s %10v %10v\n", "overhead", p(through, 0.5)-p(straight, 0.5), p(through, 0.99)-p(straight, 0.99))
	fmt.Printf("%-28s %10.2f %10.2f\n", "ratio", float64(p(through, 0.5))/float64(p(straight, 0.5)),
		float64(p(through, 0.99))/float64(p(straight, 0.99)))
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	testenv.WriteBenchFigures(t, "run\tp50 latency (ms)\tp99 latency (ms)", // make bench-restapi plots them
		fmt.Sprintf("API server directly\t%.2f\t%.2f", ms(p(straight, 0.5)), ms(p(straight, 0.99))),
		fmt.Sprintf("through the REST API\t%.2f\t%.2f", ms(p(through, 0.5)), ms(p(through, 0.99))))
}

// timeGET times one GET of url with the token.
func timeGET(t *testing.T, c *http.Client, url, token string) time.Duration {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	took := time.Since(start)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	return took
}
