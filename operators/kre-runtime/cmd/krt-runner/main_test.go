package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"go.mongodb.org/mongo-driver/v2/bson"

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

// workflow runs the nodes prepare, greet and stamp of the workflow greeting and its entrypoint
// Greet on a NATS server until the test ends, the last node keeping results in r (nil for none).
// It returns the entrypoint's address once every node's /healthz answers 200.
func workflow(t *testing.T, r *results) string {
	t.Helper()
	url := startNATS(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.DiscardHandler)
	connect := func() *nats.Conn {
		nc, err := nats.Connect(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	chain := []*node{
		{name: "prepare", input: "v.w.prepare", output: "v.w.greet"},
		{name: "greet", input: "v.w.greet", output: "v.w.stamp"},
		{name: "stamp", input: "v.w.stamp", results: r},
	}
	for _, n := range chain {
		n.nc, n.log, n.version, n.workflow = connect(), log, "greeter-v1", "greeting"
		n.addr = fmt.Sprintf("127.0.0.1:%d", testenv.FreeLoopbackPort(t))
		go func() {
			if err := n.serve(ctx); err != nil {
				t.Errorf("node %s: %v", n.name, err)
			}
		}()
	}
	e, err := newEntrypoint(connect(), "Greet=v.w.prepare")
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreeLoopbackPort(t))
	go func() { _ = serveHTTP(ctx, addr, e.routes()) }()
	for _, n := range chain {
		awaitOK(t, n.name+"'s /healthz", func(ctx context.Context) error { return get(ctx, "http://"+n.addr+"/healthz") })
	}
	awaitOK(t, "the entrypoint's /healthz", func(ctx context.Context) error { return get(ctx, "http://"+addr+"/healthz") })
	return addr
}

// get fails unless url answers 200.
func get(ctx context.Context, url string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", url, resp.Status)
	}
	return nil
}

// predict posts body to the entrypoint at addr: the status, answer and request id.
func predict(t *testing.T, addr, workflow, body string) (int, string, string) {
	t.Helper()
	resp, err := http.Post(fmt.Sprintf("http://%s/predict?workflow=%s", addr, workflow), "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(data), resp.Header.Get(HeaderRequestID)
}

func TestAWorkflowOfThreeNodesStampsTheMessageInOrder(t *testing.T) {
	addr := workflow(t, nil)
	if status, answer, _ := predict(t, addr, "Greet", "hello"); status != http.StatusOK || answer != "hello -> prepare -> greet -> stamp" {
		t.Fatalf("%d %q, want 200 %q", status, answer, "hello -> prepare -> greet -> stamp")
	}
	if status, _, _ := predict(t, addr, "Nope", "x"); status != http.StatusNotFound {
		t.Fatalf("an unknown workflow answers %d, want 404", status)
	}
}

func TestTheLastNodeKeepsEachResultInMongoDBAndTheBucket(t *testing.T) {
	stores := startStores(t)
	r, err := resultsFromEnv(stores.getenv(nil))
	if err != nil {
		t.Fatal(err)
	}
	addr := workflow(t, r) // the last node's /healthz answered: it made the bucket

	status, answer, id := predict(t, addr, "Greet", "hello")
	if status != http.StatusOK || answer != "hello -> prepare -> greet -> stamp" || id == "" {
		t.Fatalf("%d %q, request id %q", status, answer, id)
	}
	ctx := context.Background()
	var doc Result
	if err := stores.mongo(t).Database("data").Collection("greeter-v1").FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&doc); err != nil {
		t.Fatalf("the request's document: %v", err)
	}
	if doc.Workflow != "greeting" || doc.Answer != answer || !slices.Equal(doc.Nodes, []string{"prepare", "greet", "stamp"}) ||
		len(doc.Timings) != 3 || doc.Object != "greeter-v1/"+id {
		t.Errorf("document %+v", doc)
	}
	if doc.ReceivedAt.IsZero() || doc.Timings[0].ReceivedAt.Before(doc.ReceivedAt) || doc.SavedAt.Before(doc.Timings[2].ReceivedAt) {
		t.Errorf("times out of order: received %v, nodes %+v, saved %v", doc.ReceivedAt, doc.Timings, doc.SavedAt)
	}
	object, err := r.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("kre"), Key: aws.String(doc.Object)})
	if err != nil {
		t.Fatalf("the request's object: %v", err)
	}
	defer func() { _ = object.Body.Close() }()
	if data, _ := io.ReadAll(object.Body); string(data) != answer {
		t.Errorf("object %q, want %q", data, answer)
	}
}

func TestANodeIsNotReadyWhileItsLastResultCouldNotBeKept(t *testing.T) {
	stores := startStores(t)
	r, err := resultsFromEnv(stores.getenv(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer r.close(context.Background())
	n := &node{log: slog.New(slog.DiscardHandler), nc: connectedNATS(t), results: r, version: "greeter-v1", workflow: "greeting"}
	n.subscribed.Store(true)
	healthz := func() (int, string) {
		rec := httptest.NewRecorder()
		n.healthz(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := healthz(); code != http.StatusOK {
		t.Fatalf("before any request: %d %s", code, body)
	}
	// A write the store refuses, while it answers pings and the bucket is there: the same
	// request kept twice (the second insert's id is taken), as a full volume refuses writes.
	msg := &nats.Msg{Header: nats.Header{}, Data: []byte("hello")}
	msg.Header.Set(HeaderRequestID, "twice")
	if err := n.keep(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	if err := n.keep(context.Background(), msg); err == nil {
		t.Fatal("the second insert of one id succeeded")
	}
	if code, body := healthz(); code != http.StatusServiceUnavailable || !strings.Contains(body, "the last result could not be kept") ||
		!strings.Contains(body, "inserting into MongoDB") {
		t.Errorf("after a failed write: %d %s", code, body)
	}
	msg.Header.Set(HeaderRequestID, "another")
	if err := n.keep(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	if code, body := healthz(); code != http.StatusOK {
		t.Errorf("after a result is kept again: %d %s", code, body)
	}
}

func TestANodeThatCannotKeepResultsIsNotReadyAndSaysWhy(t *testing.T) {
	stores := startStores(t)
	for name, c := range map[string]struct {
		changes map[string]string
		want    string
	}{
		"MongoDB refuses the password":      {map[string]string{"KRT_MONGO_PASSWORD": "wrong"}, "MongoDB: "},
		"the store refuses the secret key":  {map[string]string{"KRT_MINIO_SECRET_KEY": "wrong-secret"}, "bucket kre: "},
		"the store's endpoint has no store": {map[string]string{"KRT_MINIO_ENDPOINT": fmt.Sprintf("127.0.0.1:%d", testenv.FreeLoopbackPort(t))}, "bucket kre: "},
	} {
		t.Run(name, func(t *testing.T) {
			r, err := resultsFromEnv(stores.getenv(c.changes))
			if err != nil {
				t.Fatal(err)
			}
			defer r.close(context.Background())
			n := &node{log: slog.New(slog.DiscardHandler), results: r}
			n.subscribed.Store(true)
			n.nc = connectedNATS(t)
			rec := httptest.NewRecorder()
			n.healthz(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
			if rec.Code != http.StatusServiceUnavailable || !strings.HasPrefix(rec.Body.String(), c.want) {
				t.Errorf("/healthz answered %d %q, want 503 %s...", rec.Code, rec.Body.String(), c.want)
			}
		})
	}
}

func TestANodeIsReadyOnlyOnceNATSHasItsSubscription(t *testing.T) {
	port := testenv.FreeLoopbackPort(t)
	nc, err := nats.Connect(fmt.Sprintf("nats://127.0.0.1:%d", port), nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1),
		nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	n := &node{nc: nc, log: slog.New(slog.DiscardHandler), name: "greet", input: "v.w.greet", output: "v.w.stamp",
		addr: fmt.Sprintf("127.0.0.1:%d", testenv.FreeLoopbackPort(t))}
	go func() { _ = n.serve(ctx) }()
	awaitOK(t, "/healthz to answer", func(ctx context.Context) error {
		err := get(ctx, "http://"+n.addr+"/healthz")
		if err == nil || !strings.Contains(err.Error(), "503") {
			return fmt.Errorf("not 503 while NATS is down: %v", err)
		}
		return nil
	})

	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	t.Cleanup(s.Shutdown)
	awaitOK(t, "the node to be ready once NATS runs", func(ctx context.Context) error { return get(ctx, "http://"+n.addr+"/healthz") })
	if s.NumSubscriptions() == 0 {
		t.Error("ready, but the server has no subscription")
	}
}

func connectedNATS(t *testing.T) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(startNATS(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func TestResultsNeedTheRuntimesEnvironmentUnlessSavingIsOff(t *testing.T) {
	if r, err := resultsFromEnv(func(k string) string { return map[string]string{"KRT_SAVE_RESULTS": "false"}[k] }); r != nil || err != nil {
		t.Errorf("KRT_SAVE_RESULTS=false: %v, %v", r, err)
	}
	if _, err := resultsFromEnv(func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "KRT_VERSION is empty") {
		t.Errorf("an empty environment: %v", err)
	}
}

func TestMongoOptionsTakeTheCredentialsFromTheirOwnVariables(t *testing.T) {
	opts, err := mongoOptions("mongodb://a:p@ss/word@kre-mongo:27017/admin", "a", "p@ss/word")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Auth.Username != "a" || opts.Auth.Password != "p@ss/word" || !slices.Equal(opts.Hosts, []string{"kre-mongo:27017"}) {
		t.Errorf("%+v %v", opts.Auth, opts.Hosts)
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
