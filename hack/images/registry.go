package main

import (
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

// serveRegistry serves an OCI distribution registry on addr (loopback), its blobs kept in
// dir and its manifests in memory: a restarted registry needs its images pushed again.
func serveRegistry(addr, dir string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--addr %s: the registry listens on loopback only", addr)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	server := &http.Server{
		Addr:              addr,
		Handler:           registry.New(registry.WithBlobHandler(registry.NewDiskBlobHandler(dir)), registry.Logger(log.New(os.Stderr, "", log.LstdFlags))),
		ReadHeaderTimeout: 10 * time.Second,
	}
	return server.ListenAndServe()
}
