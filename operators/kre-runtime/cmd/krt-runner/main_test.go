package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/quintet-operators/quintet/shared/testenv"
)

// startNATS runs a real NATS server in the test process, on a loopback port.
func startNATS(t *testing.T) string {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS did not start")
	}
	t.Cleanup(s.Shutdown)
	return s.ClientURL()
}

func TestAWorkflowOfThreeNodesStampsTheMessageInOrder(t *testing.T) {
	url := startNATS(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.DiscardHandler)
	connect := func() *nats.Conn {
		nc, err := nats.Connect(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	chain := []struct{ name, input, output string }{
		{"prepare", "v.w.prepare", "v.w.greet"},
		{"greet", "v.w.greet", "v.w.stamp"},
		{"stamp", "v.w.stamp", ""},
	}
	for _, n := range chain {
		go func() { _ = serveNode(ctx, log, connect(), n.name, n.input, n.output) }()
	}
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreeLoopbackPort(t))
	t.Setenv("KRT_HTTP_ADDRESS", addr)
	go func() { _ = serveEntrypoint(ctx, log, connect(), "Greet=v.w.prepare") }()

	var body string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Post(fmt.Sprintf("http://%s/predict?workflow=Greet", addr), "text/plain", strings.NewReader("hello"))
		if err == nil {
			data, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				body = string(data)
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if want := "hello -> prepare -> greet -> stamp"; body != want {
		t.Fatalf("answer %q, want %q", body, want)
	}
	resp, err := http.Post(fmt.Sprintf("http://%s/predict?workflow=Nope", addr), "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("an unknown workflow answers %d, want 404", resp.StatusCode)
	}
}

func TestParseEntrypointsRefusesAMalformedPair(t *testing.T) {
	if _, err := parseEntrypoints("Greet=v.w.a,broken"); err == nil {
		t.Fatal(`"broken" is not name=subject`)
	}
	got, err := parseEntrypoints("A=x,B=y")
	if err != nil || got["A"] != "x" || got["B"] != "y" {
		t.Fatalf("%v, %v", got, err)
	}
}
