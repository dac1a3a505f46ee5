package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/quintet-operators/quintet/shared/testenv"
)

// The binaries make builds from source and names for the tests (make test-kre-runtime).
const (
	ferretDBEnv  = "QUINTET_FERRETDB"
	versityGWEnv = "QUINTET_VERSITYGW"
)

// stores are a real MongoDB-wire server (FerretDB on SQLite) and S3 store (versitygw) on
// loopback, with the root credentials they require, as a RuntimeVersion's environment names them.
type stores struct {
	env map[string]string
}

// startStores runs FerretDB and versitygw until the test ends, their data in its temporary folder.
func startStores(t *testing.T) *stores {
	t.Helper()
	dir := t.TempDir()
	mongoPort, s3Port := testenv.FreeLoopbackPort(t), testenv.FreeLoopbackPort(t)
	ferretdb := command(t, ferretDBEnv, dir, "ferretdb.log")
	ferretdb.Env = append(os.Environ(), "FERRETDB_HANDLER=sqlite", "FERRETDB_SQLITE_URL=file:"+dir+"/",
		"FERRETDB_STATE_DIR="+dir, fmt.Sprintf("FERRETDB_LISTEN_ADDR=127.0.0.1:%d", mongoPort),
		fmt.Sprintf("FERRETDB_DEBUG_ADDR=127.0.0.1:%d", testenv.FreeLoopbackPort(t)), "FERRETDB_TELEMETRY=disable",
		"FERRETDB_TEST_ENABLE_NEW_AUTH=true", "FERRETDB_SETUP_DATABASE=admin", "FERRETDB_SETUP_USERNAME=kre-mongo",
		"FERRETDB_SETUP_PASSWORD=mongo-password")
	gw := command(t, versityGWEnv, dir, "versitygw.log", "--port", fmt.Sprintf("127.0.0.1:%d", s3Port), "--health", "/health",
		"posix", "--sidecar", filepath.Join(dir, "s3-meta"), filepath.Join(dir, "s3-data"))
	gw.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID=kre-minio", "ROOT_SECRET_ACCESS_KEY=minio-secret-key")
	for _, d := range []string{"s3-meta", "s3-data"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	s := &stores{env: map[string]string{
		"KRT_VERSION": "greeter-v1", "KRT_MONGO_DB_NAME": "data",
		"KRT_MONGO_URI":      fmt.Sprintf("mongodb://kre-mongo:mongo-password@127.0.0.1:%d/admin", mongoPort),
		"KRT_MONGO_USERNAME": "kre-mongo", "KRT_MONGO_PASSWORD": "mongo-password",
		"KRT_MINIO_ENDPOINT": fmt.Sprintf("127.0.0.1:%d", s3Port), "KRT_MINIO_BUCKET": "kre",
		"KRT_MINIO_ACCESS_KEY": "kre-minio", "KRT_MINIO_SECRET_KEY": "minio-secret-key",
	}}
	for _, c := range []*exec.Cmd{ferretdb, gw} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	}
	awaitOK(t, "versitygw", func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/health", s3Port), nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		return err
	})
	client := s.mongo(t)
	awaitOK(t, "FerretDB", func(ctx context.Context) error { return client.Ping(ctx, nil) })
	return s
}

// command runs the binary $envName with args, logging to name in dir.
func command(t *testing.T, envName, dir, name string, args ...string) *exec.Cmd {
	t.Helper()
	bin := os.Getenv(envName)
	if bin == "" {
		t.Fatalf("$%s is unset: run the tests with `make test-kre-runtime`, which builds the servers from source and sets it", envName)
	}
	log, err := os.Create(filepath.Join(dir, name)) //nolint:gosec // the test's own folder
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = log.Close() })
	cmd := exec.Command(bin, args...) //nolint:gosec // a binary make built
	cmd.Stdout, cmd.Stderr = log, log
	return cmd
}

// awaitOK waits up to 30 s for check to pass.
func awaitOK(t *testing.T, what string, check func(context.Context) error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := check(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// getenv reads the stores' environment, with changes.
func (s *stores) getenv(changes map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := changes[k]; ok {
			return v
		}
		return s.env[k]
	}
}

// mongo is a client of the MongoDB-wire server, as the root user.
func (s *stores) mongo(t *testing.T) *mongo.Client {
	t.Helper()
	opts, err := mongoOptions(s.env["KRT_MONGO_URI"], s.env["KRT_MONGO_USERNAME"], s.env["KRT_MONGO_PASSWORD"])
	if err != nil {
		t.Fatal(err)
	}
	c, err := mongo.Connect(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return c
}
