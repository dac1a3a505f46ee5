package restapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// heartbeat is how often an idle event stream gets a comment line, so that proxies between
// the caller and the API keep the connection open.
const heartbeat = 15 * time.Second

// event is one event of the API server's watch stream.
type event struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// watch streams a collection as Server-Sent Events. Without a resourceVersion (or an
// EventSource's Last-Event-ID) it lists first and sends every object as ADDED, then a BOOKMARK
// with the list's version; then the API server's events follow, each with its object's
// resourceVersion as the SSE id. An ERROR event (a Status: 410 Gone when the version is too
// old) ends the stream.
func (h *Handler) watch(c *call) {
	query, ok := allowedQuery(c, "watch", "labelSelector", "fieldSelector", "resourceVersion")
	if !ok {
		return
	}
	flusher, ok := c.w.(http.Flusher)
	if !ok {
		writeStatus(c.w, http.StatusInternalServerError, "InternalError", "this connection cannot stream", nil)
		return
	}
	ctx, cancel := context.WithTimeout(c.r.Context(), h.opts.WatchTimeout)
	defer cancel()
	if last := c.r.Header.Get("Last-Event-ID"); last != "" && query.Get("resourceVersion") == "" {
		query.Set("resourceVersion", last)
	}
	var initial []json.RawMessage
	if query.Get("resourceVersion") == "" {
		list, ok := h.initialList(ctx, c, query)
		if !ok {
			return
		}
		initial = list.Items
		query.Set("resourceVersion", list.Metadata.ResourceVersion)
	}
	query.Set("watch", "true")
	query.Set("allowWatchBookmarks", "true")
	query.Set("timeoutSeconds", strconv.Itoa(int(h.opts.WatchTimeout.Seconds())))
	resp := h.send(ctx, c, http.MethodGet, query, "", nil)
	if resp == nil {
		return
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		copyAnswer(c.w, resp)
		return
	}

	c.w.Header().Set("Content-Type", "text/event-stream")
	c.w.Header().Set("Cache-Control", "no-cache")
	c.w.Header().Set("X-Accel-Buffering", "no")
	c.w.WriteHeader(http.StatusOK)
	for _, item := range initial {
		writeEvent(c.w, "ADDED", item)
	}
	if initial != nil || query.Get("resourceVersion") != "" {
		bookmark, _ := json.Marshal(map[string]any{fieldAPIVersion: c.kind.APIVersion(), fieldKind: c.kind.Kind,
			fieldMetadata: map[string]any{"resourceVersion": query.Get("resourceVersion")}})
		writeEvent(c.w, "BOOKMARK", bookmark)
	}
	flusher.Flush()
	h.relay(ctx, c.w, flusher, resp.Body)
}

// objectList is the part of a list the watch needs.
type objectList struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Items []json.RawMessage `json:"items"`
}

// initialList lists the collection, or answers with the API server's error.
func (h *Handler) initialList(ctx context.Context, c *call, query url.Values) (objectList, bool) {
	var list objectList
	listQuery := url.Values{}
	for _, key := range []string{"labelSelector", "fieldSelector"} {
		if v, ok := query[key]; ok {
			listQuery[key] = v
		}
	}
	resp := h.send(ctx, c, http.MethodGet, listQuery, "", nil)
	if resp == nil {
		return list, false
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		copyAnswer(c.w, resp)
		return list, false
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		writeStatus(c.w, http.StatusBadGateway, "InternalError", "reading the list: "+err.Error(), nil)
		return list, false
	}
	if list.Items == nil {
		list.Items = []json.RawMessage{}
	}
	return list, true
}

// relay copies the API server's watch events to the stream, with heartbeats, until the watch
// ends, the caller goes, or an ERROR event arrives.
func (h *Handler) relay(ctx context.Context, w io.Writer, flusher http.Flusher, upstream io.Reader) {
	events := make(chan event)
	done := make(chan error, 1)
	go func() {
		dec := json.NewDecoder(upstream)
		for {
			var e event
			if err := dec.Decode(&e); err != nil {
				done <- err
				return
			}
			select {
			case events <- e:
			case <-ctx.Done():
				done <- ctx.Err()
				return
			}
		}
	}()
	ticker := time.NewTicker(heartbeat)
	defer ticker.Stop()
	for {
		select {
		case e := <-events:
			writeEvent(w, e.Type, e.Object)
			flusher.Flush()
			if e.Type == "ERROR" {
				return
			}
		case <-ticker.C:
			_, _ = io.WriteString(w, ": heartbeat\n\n")
			flusher.Flush()
		case err := <-done:
			if err != io.EOF && ctx.Err() == nil {
				h.opts.Log.V(1).Info("The watch stream ended", "error", err.Error())
			}
			return
		case <-ctx.Done():
			return
		}
	}
}

// writeEvent writes one Server-Sent Event: its type, its object's resourceVersion as the id
// (what an EventSource sends back as Last-Event-ID), and the object as data on one line.
func writeEvent(w io.Writer, eventType string, object json.RawMessage) {
	var meta struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(object, &meta)
	if rv := meta.Metadata.ResourceVersion; rv != "" && eventType != "ERROR" {
		_, _ = fmt.Fprintf(w, "id: %s\n", rv)
	}
	compact := object
	if data, err := json.Marshal(object); err == nil { // a RawMessage re-marshals compacted
		compact = data
	}
	_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", eventType, compact)
}
