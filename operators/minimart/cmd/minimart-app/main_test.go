package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestThePageListsTheStoreAndItsProducts(t *testing.T) {
	env := map[string]string{
		"STORE_NAME": "Corner <Shop>", "HOSTNAME": "corner-abc",
		"PRODUCTS": `[{"name":"apples","price":"3.50"},{"name":"pears","price":"0.99"}]`,
	}
	s, err := storeFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	server := httptest.NewServer(handler(s, 64))
	defer server.Close()

	body := get(t, server.URL+"/", http.StatusOK)
	for _, want := range []string{"<h1>Corner &lt;Shop&gt;</h1>", "<li>apples: 3.50</li><li>pears: 0.99</li>", "Served by corner-abc"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q:\n%s", want, body)
		}
	}
	get(t, server.URL+"/healthz", http.StatusOK)
	get(t, server.URL+"/readyz", http.StatusOK)
	get(t, server.URL+"/elsewhere", http.StatusNotFound)
}

// An overloaded store is taken out of rotation (readiness fails) but not restarted (liveness
// passes).
func TestAnOverloadedStoreIsUnreadyButAlive(t *testing.T) {
	server := httptest.NewServer(handler(store{Name: "Busy"}, 0))
	defer server.Close()
	if body := get(t, server.URL+"/readyz", http.StatusServiceUnavailable); !strings.Contains(body, "overloaded: 0 pages in flight, at most 0") {
		t.Errorf("/readyz says %q", body)
	}
	get(t, server.URL+"/healthz", http.StatusOK)
}

func TestAnEmptyStoreSaysSo(t *testing.T) {
	s, err := storeFromEnv(func(k string) string { return map[string]string{"PRODUCTS": "[]"}[k] })
	if err != nil || s.Name != "Minimart" || len(s.Products) != 0 {
		t.Fatalf("store %+v, error %v; want Minimart with no products", s, err)
	}
	if _, err := storeFromEnv(func(k string) string { return map[string]string{"PRODUCTS": "{"}[k] }); err == nil {
		t.Fatal("malformed PRODUCTS was accepted")
	}
}

func get(t *testing.T, url string, code int) string {
	t.Helper()
	resp, err := http.Get(url) //nolint:gosec,noctx // the test's own server
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != code {
		t.Fatalf("GET %s: %d, want %d", url, resp.StatusCode, code)
	}
	return string(body)
}
