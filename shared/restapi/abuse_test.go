package restapi

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/rest"

	"github.com/quintet-operators/quintet/shared/testenv"
)

// A client that sends its headers too slowly is cut off, and holds only its own connection.
func TestASlowClientIsCutOff(t *testing.T) {
	saved := clientTimeouts
	clientTimeouts.header = 300 * time.Millisecond
	t.Cleanup(func() { clientTimeouts = saved })
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreeLoopbackPort(t))
	serve(t, Options{Addr: addr})

	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the server's self-signed certificate
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	if _, err := io.WriteString(conn, "GET /api/v1/openapi.json HTTP/1.1\r\nHost: x\r\n"); err != nil { // and never the blank line
		t.Fatal(err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(conn); err != nil {
		t.Fatalf("the server kept the slow client's connection open: %v", err)
	}
}

// lockedBuffer is a log sink the handler's goroutines write to.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) write(prefix, args string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fmt.Fprintln(&b.buf, prefix, args)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// The caller's token reaches the API server and nothing else: not the log, even when the
// API server does not answer and the failure is logged with the request's details.
func TestNoTokenIsLogged(t *testing.T) {
	logs := &lockedBuffer{}
	down := rest.CopyConfig(env.Config)
	down.Host = fmt.Sprintf("https://127.0.0.1:%d", testenv.FreeLoopbackPort(t)) // nothing listens there
	kinds, err := KindsFromCRDs(widgetCRDs)
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(down, kinds, HandlerOptions{Title: "widget", MaxBodyBytes: 64 << 10, Log: funcr.New(logs.write, funcr.Options{Verbosity: 9})})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	const token = "tok3n-that-must-never-be-logged"
	for _, r := range []struct{ method, path, body string }{
		{http.MethodGet, widgetsPath("default"), ""},
		{http.MethodGet, widgetsPath("default") + "/w?" + "token=" + token, ""},
		{http.MethodPost, widgetsPath("default"), `{"metadata":{"name":"w"},"spec":{"widget":{"replicas":1}}}`},
		{http.MethodGet, widgetsPath("default") + "?watch=true", ""},
	} {
		req, err := http.NewRequest(r.method, srv.URL+r.path, strings.NewReader(r.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode < 400 || strings.Contains(string(body), token) {
			t.Errorf("%s %s: %d %s, want a failure that does not echo the token", r.method, r.path, resp.StatusCode, body)
		}
	}
	got := logs.String()
	if !strings.Contains(got, "did not answer") {
		t.Fatalf("the failures were not logged, so the test saw no log to check:\n%s", got)
	}
	if strings.Contains(got, token) {
		t.Errorf("the token is in the log:\n%s", got)
	}
}
