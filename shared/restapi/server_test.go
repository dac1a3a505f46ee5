package restapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quintet-operators/quintet/shared/testenv"
)

// serve starts a Server until the test ends and returns the certificate it presents.
func serve(t *testing.T, o Options) *x509.Certificate {
	t.Helper()
	s, err := NewServer(env.Config, widgetCRDs, o, HandlerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- s.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("the server stopped with %v", err)
		}
	})
	var resp *http.Response
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the test reads the certificate itself
	for range 50 {
		if resp, err = client.Get("https://" + o.Addr + "/api/v1/openapi.json"); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.TLS == nil {
		t.Fatalf("HTTPS answers %d", resp.StatusCode)
	}
	return resp.TLS.PeerCertificates[0]
}

func TestServesHTTPSWithASelfSignedCertificateByDefault(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreeLoopbackPort(t))
	cert := serve(t, Options{Addr: addr})
	if err := cert.VerifyHostname("127.0.0.1"); err != nil {
		t.Errorf("the self-signed certificate names the loopback address: %v", err)
	}
	if err := cert.VerifyHostname("localhost"); err != nil {
		t.Errorf("and localhost: %v", err)
	}
}

func TestServesTheCertificateOfCertDir(t *testing.T) {
	dir := t.TempDir()
	own, err := selfSigned(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	key, err := x509.MarshalPKCS8PrivateKey(own.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	for file, block := range map[string]*pem.Block{
		"tls.crt": {Type: "CERTIFICATE", Bytes: own.Certificate[0]},
		"tls.key": {Type: "PRIVATE KEY", Bytes: key},
	} {
		if err := os.WriteFile(filepath.Join(dir, file), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cert := serve(t, Options{Addr: fmt.Sprintf("127.0.0.1:%d", testenv.FreeLoopbackPort(t)), CertDir: dir})
	if string(cert.Raw) != string(own.Certificate[0]) {
		t.Error("the server presents the certificate of --api-cert-dir")
	}
}

func TestInsecureServesLoopbackOnly(t *testing.T) {
	for _, addr := range []string{":8082", "0.0.0.0:8082", "10.1.2.3:8082", "example.com:8082"} {
		_, err := NewServer(env.Config, widgetCRDs, Options{Addr: addr, Insecure: true}, HandlerOptions{})
		if err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("%s: --api-insecure accepted (%v)", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:8082", "[::1]:8082", "localhost:8082"} {
		if _, err := NewServer(env.Config, widgetCRDs, Options{Addr: addr, Insecure: true}, HandlerOptions{}); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
}

func TestCORSAllowsTheConfiguredOriginsOnly(t *testing.T) {
	kinds, err := KindsFromCRDs(widgetCRDs)
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(env.Config, kinds, HandlerOptions{CORSOrigins: []string{"https://portal.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	for origin, allowed := range map[string]bool{"https://portal.example.com": true, "https://evil.example.com": false, "https://portal.example.com.evil": false} {
		req := httptest.NewRequest(http.MethodOptions, "/api/v1/namespaces/a/widgets", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if got := rec.Header().Get("Access-Control-Allow-Origin") == origin; got != allowed {
			t.Errorf("%s: allowed %v, want %v", origin, got, allowed)
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil)
	req.Header.Set("Origin", "https://portal.example.com")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Header().Get("Access-Control-Allow-Origin") != "https://portal.example.com" || rec.Code != http.StatusOK {
		t.Errorf("an allowed origin's GET is answered with its CORS header: %d %v", rec.Code, rec.Header())
	}
}
