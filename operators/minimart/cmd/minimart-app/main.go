// Command minimart-app serves a store's web page: the minimart chart's container. Its store
// name and products come from the environment (STORE_NAME, PRODUCTS as a JSON list of
// {"name", "price"}), as the chart sets them from a Minimart's spec.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// product is one line of the page.
type product struct {
	Name  string `json:"name"`
	Price string `json:"price"`
}

// store is what the page shows.
type store struct {
	Name     string
	Products []product
	Pod      string
}

var page = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Name}}</title></head>
<body><h1>{{.Name}}</h1>
{{if .Products}}<ul>{{range .Products}}<li>{{.Name}}: {{.Price}}</li>{{end}}</ul>{{else}}<p>Nothing on the shelves yet.</p>{{end}}
<footer>Served by {{.Pod}}</footer></body></html>
`))

// storeFromEnv reads the store from the environment.
func storeFromEnv(getenv func(string) string) (store, error) {
	s := store{Name: getenv("STORE_NAME"), Pod: getenv("HOSTNAME")}
	if s.Name == "" {
		s.Name = "Minimart"
	}
	if raw := getenv("PRODUCTS"); raw != "" && raw != "null" {
		if err := json.Unmarshal([]byte(raw), &s.Products); err != nil {
			return s, fmt.Errorf("PRODUCTS is not a JSON list of {name, price}: %w", err)
		}
	}
	return s, nil
}

// handler serves the page on /, liveness on /healthz and readiness on /readyz, which differ
// on purpose: /healthz says only that the process answers (a restart would not help
// otherwise), /readyz also that the page renders and that fewer than maxInFlight pages are
// being served, so that an overloaded store leaves the Service's endpoints until it catches
// up instead of being restarted.
func handler(s store, maxInFlight int64) http.Handler {
	var inFlight atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if n := inFlight.Load(); n >= maxInFlight {
			http.Error(w, fmt.Sprintf("overloaded: %d pages in flight, at most %d", n, maxInFlight), http.StatusServiceUnavailable)
			return
		}
		if err := page.Execute(io.Discard, s); err != nil {
			http.Error(w, "the page does not render: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		inFlight.Add(1)
		defer inFlight.Add(-1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := page.Execute(w, s); err != nil {
			slog.Error("Rendering the page", "error", err)
		}
	})
	return mux
}

func main() {
	listen := flag.String("listen", ":8080", "Address to serve the page on.")
	maxInFlight := flag.Int64("max-in-flight", 64, "Pages served at once above which /readyz reports the store overloaded.")
	flag.Parse()
	s, err := storeFromEnv(os.Getenv)
	if err != nil {
		slog.Error("Bad configuration", "error", err)
		os.Exit(2)
	}
	server := &http.Server{Addr: *listen, Handler: handler(s, *maxInFlight), ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdown)
	}()
	slog.Info("Serving the store", "store", s.Name, "products", len(s.Products), "address", *listen)
	if err := server.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		slog.Error("Serving", "error", err)
		os.Exit(1)
	}
}
