package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// Headers a request carries through its workflow.
const (
	// HeaderRequestID is the request's id, made by the entrypoint and answered to the client.
	HeaderRequestID = "KRT-Request-Id"
	// HeaderReceived is when the entrypoint received the request (RFC 3339).
	HeaderReceived = "KRT-Received"
	// HeaderTrail has a value `<node>=<received, Unix nanoseconds>/<microseconds taken>` per
	// node the request went through, in order.
	HeaderTrail = "KRT-Trail"
	// HeaderError is set by the last node when it could not keep the result.
	HeaderError = "KRT-Error"
)

// stampSeparator goes between the message and each node's name.
const stampSeparator = " -> "

// maxInFlight bounds the messages a node handles at once. NATS calls a subscription's handler
// for one message at a time; keeping a result waits on MongoDB and the object store, so the
// last node would otherwise answer one request at a time. A full node stops reading more.
const maxInFlight = 32

// node is one node of a workflow: it stamps each message with its name and passes it on.
type node struct {
	nc  *nats.Conn
	log *slog.Logger
	// addr is where /healthz is served.
	addr                                   string
	version, workflow, name, input, output string
	// results keeps the last node's results; nil for other nodes and when nothing is kept.
	results *results
	// subscribed is set once the server has the node's subscription.
	subscribed atomic.Bool
	// inFlight holds a slot per message being handled.
	inFlight chan struct{}
	// keepFailed is the last failure to keep a result, nil once one is kept again.
	keepFailed atomic.Pointer[keepFailure]
}

// keepFailure is a result that could not be kept, and when.
type keepFailure struct {
	err error
	at  time.Time
}

// keepFailureMemory is how long a failure to keep a result makes the node unready, unless a
// result is kept meanwhile: a full volume passes the ping and the bucket check, and shows
// only when something is written.
const keepFailureMemory = time.Minute

// serve subscribes and serves /healthz until ctx ends.
func (n *node) serve(ctx context.Context) error {
	if n.input == "" {
		return errors.New("KRT_NATS_INPUT is empty")
	}
	if n.results != nil {
		defer n.results.close(context.WithoutCancel(ctx))
	}
	n.inFlight = make(chan struct{}, maxInFlight)
	sub, err := n.nc.QueueSubscribe(n.input, n.name, func(m *nats.Msg) {
		n.inFlight <- struct{}{}
		go func() {
			defer func() { <-n.inFlight }()
			n.handle(ctx, m)
		}()
	})
	if err != nil {
		return fmt.Errorf("subscribing to %s: %w", n.input, err)
	}
	defer func() { _ = sub.Drain() }()
	go n.awaitSubscription(ctx)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", n.healthz)
	return serveHTTP(ctx, n.addr, mux)
}

// awaitSubscription marks the node subscribed once the server has its subscription: NATS may
// not answer yet when the node starts (the client connects and subscribes when it does).
func (n *node) awaitSubscription(ctx context.Context) {
	for ctx.Err() == nil {
		if err := n.nc.FlushTimeout(checkTimeout); err == nil {
			n.subscribed.Store(true)
			n.log.Info("Serving a node", "node", n.name, "input", n.input, "output", n.output, "keepsResults", n.results != nil)
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// healthz answers 200 once the node takes messages: subscribed, connected, and able to keep results.
func (n *node) healthz(w http.ResponseWriter, r *http.Request) {
	switch {
	case !n.subscribed.Load():
		http.Error(w, "not subscribed yet", http.StatusServiceUnavailable)
		return
	case !n.nc.IsConnected():
		http.Error(w, "not connected to NATS", http.StatusServiceUnavailable)
		return
	case n.results != nil:
		ctx, cancel := context.WithTimeout(r.Context(), checkTimeout)
		defer cancel()
		if err := n.results.check(ctx); err != nil {
			n.log.Error("Cannot keep results", "error", err)
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		if f := n.keepFailed.Load(); f != nil && time.Since(f.at) < keepFailureMemory {
			http.Error(w, fmt.Sprintf("the last result could not be kept, %s ago: %v", time.Since(f.at).Round(time.Second), f.err),
				http.StatusServiceUnavailable)
			return
		}
	}
	_, _ = io.WriteString(w, "ok\n")
}

// handle stamps m and passes it on, or, at the last node, keeps the result and answers.
func (n *node) handle(ctx context.Context, m *nats.Msg) {
	start := time.Now()
	out := &nats.Msg{Header: nats.Header{}, Data: append(append(m.Data, stampSeparator...), n.name...)}
	for k, v := range m.Header {
		out.Header[k] = v
	}
	out.Header.Add(HeaderTrail, fmt.Sprintf("%s=%d/%d", n.name, start.UnixNano(), time.Since(start).Microseconds()))
	var err error
	if n.output != "" {
		out.Subject, out.Reply = n.output, m.Reply
		err = n.nc.PublishMsg(out)
	} else {
		if n.results != nil {
			if kerr := n.keep(ctx, out); kerr != nil {
				n.log.Error("Keeping a result", "request", out.Header.Get(HeaderRequestID), "error", kerr)
				out.Header.Set(HeaderError, "keeping the result: "+kerr.Error())
			}
		}
		err = m.RespondMsg(out)
	}
	if err != nil {
		n.log.Error("Passing a message on", "input", n.input, "output", n.output, "error", err)
	}
}

// keep saves the result out carries.
func (n *node) keep(ctx context.Context, out *nats.Msg) error {
	id := out.Header.Get(HeaderRequestID)
	if id == "" {
		return errors.New("the request has no " + HeaderRequestID)
	}
	res := &Result{RequestID: id, Version: n.version, Workflow: n.workflow, Answer: string(out.Data), Object: ObjectKey(n.version, id)}
	res.ReceivedAt, _ = time.Parse(time.RFC3339Nano, out.Header.Get(HeaderReceived))
	for _, t := range out.Header.Values(HeaderTrail) {
		timing := parseTiming(t)
		res.Nodes, res.Timings = append(res.Nodes, timing.Node), append(res.Timings, timing)
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	if err := n.results.save(ctx, res); err != nil {
		n.keepFailed.Store(&keepFailure{err: err, at: time.Now()})
		return err
	}
	n.keepFailed.Store(nil)
	return nil
}

// parseTiming reads a value of HeaderTrail.
func parseTiming(value string) Timing {
	name, rest, _ := strings.Cut(value, "=")
	at, micros, _ := strings.Cut(rest, "/")
	ns, _ := strconv.ParseInt(at, 10, 64)
	us, _ := strconv.ParseInt(micros, 10, 64)
	return Timing{Node: name, ReceivedAt: time.Unix(0, ns).UTC(), Micros: us}
}
