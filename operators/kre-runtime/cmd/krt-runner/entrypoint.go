package main

import (
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// maxBody bounds a request's body.
const maxBody = 1 << 20

// entrypoint hands HTTP requests to their workflow's first node and answers with the reply.
type entrypoint struct {
	nc *nats.Conn
	// subjects are the first subjects of the workflows, by entrypoint name.
	subjects map[string]string
}

func newEntrypoint(nc *nats.Conn, entrypoints string) (*entrypoint, error) {
	subjects, err := parseEntrypoints(entrypoints)
	if err != nil {
		return nil, err
	}
	return &entrypoint{nc: nc, subjects: subjects}, nil
}

// routes are POST /predict and GET /healthz.
func (e *entrypoint) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		if !e.nc.IsConnected() {
			http.Error(w, "not connected to NATS", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("POST /predict", e.predict)
	return mux
}

func (e *entrypoint) predict(w http.ResponseWriter, r *http.Request) {
	subject, ok := e.subject(r.URL.Query().Get("workflow"))
	if !ok {
		http.Error(w, "unknown workflow: name one of KRT_NATS_ENTRYPOINTS with ?workflow=", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id := rand.Text()
	msg := &nats.Msg{Subject: subject, Data: body, Header: nats.Header{}}
	msg.Header.Set(HeaderRequestID, id)
	msg.Header.Set(HeaderReceived, time.Now().UTC().Format(time.RFC3339Nano))
	w.Header().Set(HeaderRequestID, id)
	reply, err := e.nc.RequestMsgWithContext(r.Context(), msg)
	switch {
	case err != nil:
		http.Error(w, "the workflow did not answer: "+err.Error(), http.StatusGatewayTimeout)
	case reply.Header.Get(HeaderError) != "":
		http.Error(w, reply.Header.Get(HeaderError), http.StatusBadGateway)
	default:
		_, _ = w.Write(reply.Data)
	}
}

// subject is the first subject of the workflow named (the only one when name is empty).
func (e *entrypoint) subject(name string) (string, bool) {
	if name == "" && len(e.subjects) == 1 {
		for _, only := range e.subjects {
			return only, true
		}
	}
	s, ok := e.subjects[name]
	return s, ok
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
