// Command krt-runner is a KRT workflow's node or entrypoint, small enough to run anywhere,
// for the RuntimeVersion samples and the e2e message flow. It reads the environment a
// RuntimeVersion gives its containers.
//
// As a node it subscribes to KRT_NATS_INPUT (in a queue group, so replicas share the work),
// appends its node name to each message and publishes it to KRT_NATS_OUTPUT with the same
// reply subject. The last node (no output) keeps the result, as KRE's runners kept their
// data: the answer as an object of the Runtime's bucket, read back to be sure, and a document
// in MongoDB naming the request, its workflow, its nodes and their timings (KRT_SAVE_RESULTS=false
// keeps nothing); then it answers the reply subject. A node serves GET /healthz on
// KRT_HTTP_ADDRESS (default :8080): ready once subscribed, and, for the last node, once MongoDB
// accepts its credentials and the bucket exists (it makes the bucket).
//
// As the entrypoint (KRT_NODE_NAME=entrypoint) it serves HTTP on KRT_HTTP_ADDRESS: POST
// /predict?workflow=<entrypoint name> sends the body to that workflow's first subject
// (KRT_NATS_ENTRYPOINTS) and answers with the reply and the request's id (header
// KRT-Request-Id); GET /healthz says whether NATS is connected.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
)

const (
	// entrypointName is KRT_NODE_NAME of the entrypoint.
	entrypointName = "entrypoint"
	// requestTimeout bounds a request's trip through its workflow.
	requestTimeout = 10 * time.Second
	// checkTimeout bounds a readiness check.
	checkTimeout = 3 * time.Second
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, log); err != nil {
		log.Error("krt-runner stopped", "error", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, log *slog.Logger) error {
	name := os.Getenv("KRT_NODE_NAME")
	nc, err := nats.Connect(os.Getenv("KRT_NATS_SERVER"), nats.Name("krt-"+name), nats.MaxReconnects(-1), nats.RetryOnFailedConnect(true))
	if err != nil {
		return fmt.Errorf("connecting to NATS: %w", err)
	}
	defer nc.Close()
	if name == entrypointName {
		e, err := newEntrypoint(nc, os.Getenv("KRT_NATS_ENTRYPOINTS"))
		if err != nil {
			return err
		}
		log.Info("Serving the entrypoint", "workflows", os.Getenv("KRT_NATS_ENTRYPOINTS"))
		return serveHTTP(ctx, httpAddress(), e.routes())
	}
	n := &node{nc: nc, log: log, addr: httpAddress(), version: os.Getenv("KRT_VERSION"), workflow: os.Getenv("KRT_WORKFLOW"), name: name,
		input: os.Getenv("KRT_NATS_INPUT"), output: os.Getenv("KRT_NATS_OUTPUT")}
	if n.output == "" {
		if n.results, err = resultsFromEnv(os.Getenv); err != nil {
			return err
		}
	}
	return n.serve(ctx)
}

// httpAddress is KRT_HTTP_ADDRESS, by default :8080.
func httpAddress() string { return cmp.Or(os.Getenv("KRT_HTTP_ADDRESS"), ":8080") }

// serveHTTP serves routes on addr until ctx ends.
func serveHTTP(ctx context.Context, addr string, routes http.Handler) error {
	server := &http.Server{Addr: addr, Handler: http.TimeoutHandler(routes, requestTimeout, "timed out\n"), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdown)
	}()
	if err := server.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
