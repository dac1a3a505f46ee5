package restapi

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sseEvent is one Server-Sent Event as a client reads it.
type sseEvent struct {
	id, event string
	data      map[string]any
}

// openStream starts a watch and returns its events as they arrive. While the API server's
// watch cache of the CRD is starting it answers 429 with a Retry-After: it retries then.
func openStream(t *testing.T, path, token string, headers ...string) (*http.Response, <-chan sseEvent) {
	t.Helper()
	for tries := 1; ; tries++ {
		resp, events := startStream(t, path, token, headers...)
		if resp.StatusCode != http.StatusTooManyRequests || tries == 20 {
			return resp, events
		}
		if resp.Header.Get("Retry-After") == "" {
			t.Fatal("a 429 carries the API server's Retry-After")
		}
		time.Sleep(time.Second)
	}
}

func startStream(t *testing.T, path, token string, headers ...string) (*http.Response, <-chan sseEvent) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", api.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	events := make(chan sseEvent, 100)
	go func() {
		defer close(events)
		scanner := bufio.NewScanner(resp.Body)
		scanner.Buffer(make([]byte, 1<<20), 1<<20)
		var e sseEvent
		for scanner.Scan() {
			line := scanner.Text()
			switch {
			case line == "":
				if e.event != "" {
					events <- e
				}
				e = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				e.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				e.event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &e.data)
			}
		}
	}()
	return resp, events
}

// next waits for the stream's next event.
func next(t *testing.T, events <-chan sseEvent) sseEvent {
	t.Helper()
	select {
	case e, ok := <-events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return e
	case <-time.After(20 * time.Second):
		t.Fatal("no event in 20s")
	}
	return sseEvent{}
}

func nameOf(e sseEvent) string {
	meta, _ := e.data["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	return name
}

func TestWatchStreamsListThenChangesAsServerSentEvents(t *testing.T) {
	ns := env.NewNamespace(t, "watch")
	token := env.Token(t, ns, "watcher", widgetRules("get", "list", "watch", "create", "patch", "delete"))
	widget := func(name string) string {
		return `{"metadata":{"name":"` + name + `"},"spec":{"widget":{"replicas":1}}}`
	}
	do(t, "POST", widgetsPath(ns), token, "application/json", widget("before")).expect(t, http.StatusCreated)

	resp, events := openStream(t, widgetsPath(ns)+"?watch=true", token)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("a watch answers 200 text/event-stream, not %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if e := next(t, events); e.event != "ADDED" || nameOf(e) != "before" || e.id == "" {
		t.Fatalf("first the existing Widget, ADDED with its resourceVersion as id: %+v", e)
	}
	listed := next(t, events)
	if listed.event != "BOOKMARK" {
		t.Fatalf("then a BOOKMARK ends the initial list: %+v", listed)
	}

	do(t, "POST", widgetsPath(ns), token, "application/json", widget("after")).expect(t, http.StatusCreated)
	do(t, "PATCH", widgetsPath(ns)+"/after", token, mergePatch, `{"spec":{"widget":{"replicas":2}}}`).expect(t, http.StatusOK)
	do(t, "DELETE", widgetsPath(ns)+"/after", token, "", "").expect(t, http.StatusOK)
	var seen []string
	for len(seen) < 3 {
		e := next(t, events)
		if e.event == "BOOKMARK" {
			continue
		}
		seen = append(seen, e.event+" "+nameOf(e))
	}
	if strings.Join(seen, ", ") != "ADDED after, MODIFIED after, DELETED after" {
		t.Fatalf("changes follow in order: %v", seen)
	}

	// An EventSource reconnects with Last-Event-ID: the stream resumes after it, no list.
	_, resumed := openStream(t, widgetsPath(ns)+"?watch=true", token, "Last-Event-ID", listed.id)
	if e := next(t, resumed); e.event != "BOOKMARK" || e.id != listed.id {
		t.Fatalf("a resumed stream starts with a BOOKMARK at its version: %+v", e)
	}
	if e := next(t, resumed); e.event != "ADDED" || nameOf(e) != "after" {
		t.Fatalf("then replays what came after: %+v", e)
	}
}

func TestWatchFromAnExpiredVersionEndsWithGone(t *testing.T) {
	ns := env.NewNamespace(t, "gone")
	token := env.Token(t, ns, "watcher", widgetRules("list", "watch"))
	resp, events := openStream(t, widgetsPath(ns)+"?watch=true&resourceVersion=1", token)
	if resp.StatusCode == http.StatusGone {
		t.Log("the API server refused the version before streaming: HTTP 410")
		return
	}
	for {
		e, ok := <-events
		if !ok {
			t.Fatalf("the stream (%d) ended without an ERROR event", resp.StatusCode)
		}
		if e.event == "ERROR" {
			if e.data["code"] != 410.0 || e.data["kind"] != "Status" {
				t.Fatalf("the ERROR event is the API server's 410 Status: %+v", e.data)
			}
			t.Logf("ERROR event: %v", e.data["message"])
			if _, more := <-events; more {
				t.Fatal("the stream ends after the ERROR event")
			}
			return
		}
	}
}

func TestWatchNeedsTheRightToWatch(t *testing.T) {
	ns := env.NewNamespace(t, "nowatch")
	token := env.Token(t, ns, "lister", widgetRules("list"))
	resp, _ := openStream(t, widgetsPath(ns)+"?watch=true", token)
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a token that may list but not watch gets 403, not %d", resp.StatusCode)
	}
}
