// Command krt-runner is a KRT workflow's node or entrypoint, small enough to run anywhere,
// for the RuntimeVersion samples and the e2e message flow. It reads the environment a
// RuntimeVersion gives its containers.
//
// As a node it subscribes to KRT_NATS_INPUT (in a queue group, so replicas share the work),
// appends its node name to each message and publishes it to KRT_NATS_OUTPUT with the same
// reply subject; the last node (no output) answers the reply subject. As the entrypoint
// (KRT_NODE_NAME=entrypoint) it serves HTTP on KRT_HTTP_ADDRESS (default :8080): POST
// /predict?workflow=<entrypoint name> sends the body to that workflow's first subject
// (KRT_NATS_ENTRYPOINTS) and answers with the reply; GET /healthz says whether NATS is connected.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
)

const (
	// entrypointName is KRT_NODE_NAME of the entrypoint.
	entrypointName = "entrypoint"
	// stampSeparator goes between the message and each node's name.
	stampSeparator = " -> "
	// requestTimeout bounds a request's trip through its workflow.
	requestTimeout = 10 * time.Second
	// maxBody bounds a request's body.
	maxBody = 1 << 20
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
		return serveEntrypoint(ctx, log, nc, os.Getenv("KRT_NATS_ENTRYPOINTS"))
	}
	return serveNode(ctx, log, nc, name, os.Getenv("KRT_NATS_INPUT"), os.Getenv("KRT_NATS_OUTPUT"))
}

// serveNode stamps each message of input with name and passes it on until ctx ends.
func serveNode(ctx context.Context, log *slog.Logger, nc *nats.Conn, name, input, output string) error {
	if input == "" {
		return errors.New("KRT_NATS_INPUT is empty")
	}
	sub, err := nc.QueueSubscribe(input, name, func(m *nats.Msg) {
		stamped := append(append(m.Data, stampSeparator...), name...)
		var err error
		if output == "" {
			err = m.Respond(stamped)
		} else {
			err = nc.PublishRequest(output, m.Reply, stamped)
		}
		if err != nil {
			log.Error("Passing a message on", "input", input, "output", output, "error", err)
		}
	})
	if err != nil {
		return fmt.Errorf("subscribing to %s: %w", input, err)
	}
	defer func() { _ = sub.Drain() }()
	log.Info("Serving a node", "node", name, "input", input, "output", output)
	<-ctx.Done()
	return nil
}

// serveEntrypoint serves POST /predict and GET /healthz until ctx ends.
func serveEntrypoint(ctx context.Context, log *slog.Logger, nc *nats.Conn, entrypoints string) error {
	subjects, err := parseEntrypoints(entrypoints)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		if !nc.IsConnected() {
			http.Error(w, "not connected to NATS", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("POST /predict", func(w http.ResponseWriter, r *http.Request) {
		subject, ok := subjects[r.URL.Query().Get("workflow")]
		if !ok && len(subjects) == 1 && r.URL.Query().Get("workflow") == "" {
			for _, only := range subjects {
				subject, ok = only, true
			}
		}
		if !ok {
			http.Error(w, "unknown workflow: name one of KRT_NATS_ENTRYPOINTS with ?workflow=", http.StatusNotFound)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		reply, err := nc.RequestWithContext(r.Context(), subject, body)
		if err != nil {
			http.Error(w, "the workflow did not answer: "+err.Error(), http.StatusGatewayTimeout)
			return
		}
		_, _ = w.Write(reply.Data)
	})
	addr := os.Getenv("KRT_HTTP_ADDRESS")
	if addr == "" {
		addr = ":8080"
	}
	server := &http.Server{Addr: addr, Handler: http.TimeoutHandler(mux, requestTimeout, "timed out\n"), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdown)
	}()
	log.Info("Serving the entrypoint", "workflows", entrypoints)
	if err := server.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// parseEntrypoints reads KRT_NATS_ENTRYPOINTS: `name=subject,...`.
func parseEntrypoints(value string) (map[string]string, error) {
	out := map[string]string{}
	for pair := range strings.SplitSeq(value, ",") {
		name, subject, ok := strings.Cut(pair, "=")
		if !ok || name == "" || subject == "" {
			return nil, fmt.Errorf("KRT_NATS_ENTRYPOINTS: %q is not name=subject", pair)
		}
		out[name] = subject
	}
	return out, nil
}
