package restapi

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
)

// Options are the REST API's command-line settings.
type Options struct {
	// Addr is where the API listens; empty: no API.
	Addr string
	// Insecure serves plain HTTP, on a loopback address only.
	Insecure bool
	// CertDir holds tls.crt and tls.key (reloaded when they change); empty: a self-signed
	// certificate made at start.
	CertDir     string
	CORSOrigins []string
	// Console serves the web console (shared/console) beside the API, at /console/.
	Console bool
}

// Bind registers the flags on fs.
func (o *Options) Bind(flags *flag.FlagSet) {
	flags.StringVar(&o.Addr, "api-bind-address", "",
		"Address of the REST API and its Swagger UI (/api/v1/docs), e.g. :8082; empty turns it off. It acts with each caller's bearer token.")
	flags.BoolVar(&o.Console, "api-console", true,
		"Serve the web console at /console/ beside the REST API; like the API it acts with each caller's token.")
	flags.BoolVar(&o.Insecure, "api-insecure", false, "Serve the REST API over plain HTTP: only on a loopback address, for development.")
	flags.StringVar(&o.CertDir, "api-cert-dir", "",
		"Directory with tls.crt and tls.key for the REST API; empty: a self-signed certificate made at start.")
	flags.Func("api-cors-origins", "Comma-separated origins (exactly, e.g. https://portal.example.com) whose pages may call the REST API; none by default.",
		func(v string) error {
			for _, origin := range strings.Split(v, ",") {
				if origin = strings.TrimSpace(origin); origin != "" {
					o.CORSOrigins = append(o.CORSOrigins, origin)
				}
			}
			return nil
		})
}

// Enabled says whether the API is to be served.
func (o Options) Enabled() bool { return o.Addr != "" && o.Addr != "0" }

// Server is the REST API as a manager runnable: it serves on every replica, elected or not.
type Server struct {
	opts Options
	// mux serves the API at "/" and what Handle adds beside it.
	mux *http.ServeMux
	log logr.Logger
}

// NewServer builds the API for the CRDs in crds (*.yaml), against the API server of cfg;
// the origins of o take the place of handlerOpts'.
func NewServer(cfg *rest.Config, crds fs.FS, o Options, handlerOpts HandlerOptions) (*Server, error) {
	if o.Insecure {
		if err := requireLoopback(o.Addr); err != nil {
			return nil, err
		}
	}
	handlerOpts.CORSOrigins = o.CORSOrigins
	kinds, err := KindsFromCRDs(crds)
	if err != nil {
		return nil, fmt.Errorf("the REST API's kinds: %w", err)
	}
	h, err := NewHandler(cfg, kinds, handlerOpts)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/", h)
	return &Server{opts: o, mux: mux, log: handlerOpts.Log}, nil
}

// Handle serves handler for pattern beside the API, on the same address and certificate
// (the web console), before Start.
func (s *Server) Handle(pattern string, handler http.Handler) { s.mux.Handle(pattern, handler) }

// requireLoopback refuses an address that is not on a loopback interface.
func requireLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--api-bind-address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("--api-insecure serves plain HTTP on loopback addresses only (e.g. 127.0.0.1:8082), not %q", addr)
	}
	return nil
}

// clientTimeouts cut off a client that sends its headers or its request too slowly, or keeps
// an idle connection: a slow client holds a connection, not the server.
var clientTimeouts = struct{ header, request, idle time.Duration }{10 * time.Second, time.Minute, 2 * time.Minute}

// NeedLeaderElection is false: every replica serves the API.
func (s *Server) NeedLeaderElection() bool { return false }

// Start serves until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	listener, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("the REST API cannot listen on %s: %w", s.opts.Addr, err)
	}
	srv := &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: clientTimeouts.header,
		ReadTimeout:       clientTimeouts.request,
		IdleTimeout:       clientTimeouts.idle,
		MaxHeaderBytes:    64 << 10,
	}
	scheme := "http"
	if !s.opts.Insecure {
		tlsConfig, err := s.tlsConfig(ctx, listener.Addr())
		if err != nil {
			_ = listener.Close()
			return err
		}
		srv.TLSConfig = tlsConfig
		listener = tls.NewListener(listener, tlsConfig)
		scheme = "https"
	}
	s.log.Info("Serving the REST API", "url", fmt.Sprintf("%s://%s%s", scheme, listener.Addr(), docsPath))
	errs := make(chan error, 1)
	go func() { errs <- srv.Serve(listener) }()
	select {
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	case err := <-errs:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// tlsConfig serves the certificate of CertDir, reloaded when it changes, or a self-signed one.
func (s *Server) tlsConfig(ctx context.Context, addr net.Addr) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	if s.opts.CertDir != "" {
		watcher, err := certwatcher.New(filepath.Join(s.opts.CertDir, "tls.crt"), filepath.Join(s.opts.CertDir, "tls.key"))
		if err != nil {
			return nil, fmt.Errorf("the REST API's certificate: %w", err)
		}
		go func() {
			if err := watcher.Start(ctx); err != nil {
				s.log.Error(err, "Watching the REST API's certificate failed")
			}
		}()
		cfg.GetCertificate = watcher.GetCertificate
		return cfg, nil
	}
	cert, err := selfSigned(addr)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(cert.Certificate[0])
	s.log.Info("The REST API serves a self-signed certificate (set --api-cert-dir for your own)", "sha256", fmt.Sprintf("%x", sum))
	cfg.Certificates = []tls.Certificate{cert}
	return cfg, nil
}

// selfSigned makes a certificate for localhost, the loopback addresses, the host's name and
// the address it listens on, valid for a year.
func selfSigned(addr net.Addr) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, err
	}
	names := []string{"localhost"}
	if host, err := os.Hostname(); err == nil {
		names = append(names, host)
	}
	ips := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	if tcp, ok := addr.(*net.TCPAddr); ok && !tcp.IP.IsUnspecified() {
		ips = append(ips, tcp.IP)
	}
	template := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "quintet-restapi"},
		DNSNames:     names,
		IPAddresses:  ips,
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
