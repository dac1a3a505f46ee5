// Command agent is the e2e suite's probe on the real node: a small HTTP server, run from an
// image Quintet builds, that answers from inside a pod what only a pod can tell: whether a
// name resolves through cluster DNS, whether an address can be reached, and what the API
// server says to the pod's own service account.
//
//	GET /healthz             200 "ok"
//	GET /hostname            the pod's hostname
//	GET /resolve?name=N      200 with the addresses of N, 502 with the error
//	GET /dial?addr=H:P       200 when a TCP connection to H:P opens within 2 s, 502 otherwise
//	GET /kube?path=P         the API server's status code and body for GET P, with the
//	                         pod's service-account token (in-cluster configuration)
//
// --exit-after makes the process exit with status 1 after the given time, for crash tests;
// --print-hostname prints the hostname and exits, for `kubectl exec`.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

func main() {
	listen := flag.String("listen", ":8080", "address to serve on")
	exitAfter := flag.Duration("exit-after", 0, "exit with status 1 after this long (0: never)")
	printHostname := flag.Bool("print-hostname", false, "print the hostname and exit (for kubectl exec)")
	flag.Parse()
	if *printHostname {
		name, err := os.Hostname()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(name)
		return
	}
	if *exitAfter > 0 {
		time.AfterFunc(*exitAfter, func() {
			log.Printf("Exiting with status 1 after %s, as asked", *exitAfter)
			os.Exit(1)
		})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("GET /hostname", func(w http.ResponseWriter, _ *http.Request) {
		name, _ := os.Hostname()
		_, _ = io.WriteString(w, name)
	})
	mux.HandleFunc("GET /resolve", resolve)
	mux.HandleFunc("GET /dial", dial)
	mux.HandleFunc("GET /kube", kube)
	server := &http.Server{Addr: *listen, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	// As PID 1 of its container the agent gets no default signal handling: stop on SIGTERM
	// itself, or every pod deletion waits out the grace period.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = server.Shutdown(context.Background())
	}()
	log.Printf("Serving on %s", *listen)
	if err := server.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

func resolve(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(ctx, r.URL.Query().Get("name"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	_, _ = io.WriteString(w, strings.Join(addrs, "\n"))
}

func dial(w http.ResponseWriter, r *http.Request) {
	conn, err := net.DialTimeout("tcp", r.URL.Query().Get("addr"), 2*time.Second)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	_ = conn.Close()
	_, _ = io.WriteString(w, "connected")
}

// kube relays one GET to the API server as the pod's service account and answers with the
// API server's status code and body.
func kube(w http.ResponseWriter, r *http.Request) {
	client, token, err := inClusterClient()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	host := net.JoinHostPort(os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT"))
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, "https://"+host+r.URL.Query().Get("path"), nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer func() { _ = resp.Body.Close() }()
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

func inClusterClient() (*http.Client, string, error) {
	token, err := os.ReadFile(filepath.Join(serviceAccountDir, "token"))
	if err != nil {
		return nil, "", fmt.Errorf("no service-account token: %w", err)
	}
	ca, err := os.ReadFile(filepath.Join(serviceAccountDir, "ca.crt"))
	if err != nil {
		return nil, "", err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, "", errors.New("invalid service-account CA")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	return &http.Client{Transport: tr, Timeout: 5 * time.Second}, strings.TrimSpace(string(token)), nil
}
