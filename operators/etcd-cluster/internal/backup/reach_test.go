package backup

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
)

func TestParseAllowlist(t *testing.T) {
	a, err := ParseAllowlist(" S3.quintet-s3.svc., 10.1.0.0/16,127.0.0.1, fd00::/8 ,")
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]bool{
		"s3.quintet-s3.svc": true, "S3.QUINTET-S3.SVC.": true, "10.1.200.3": true, "127.0.0.1": true, "fd00::1": true,
		"::ffff:10.1.0.9": true, "10.2.0.1": false, "127.0.0.2": false, "s3.other.svc": false, "quintet-s3.svc": false,
	} {
		if got := a.AllowsHost(host); got != want {
			t.Errorf("AllowsHost(%q) = %v, want %v", host, got, want)
		}
	}
	if _, err := ParseAllowlist("10.0.0.0/40"); err == nil {
		t.Error("a range that is no CIDR is refused")
	}
}

func TestReachRefusesAddressesInsideTheClusterUnlessListed(t *testing.T) {
	listed, err := ParseAllowlist("s3.quintet-s3.svc,192.168.0.0/16")
	if err != nil {
		t.Fatal(err)
	}
	loopback := Reach{Internal: Allowlist{Nets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		APIServer: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:6443")}}
	for _, tc := range []struct {
		reach    Reach
		endpoint string
		refused  string // "" when allowed
	}{
		{Reach{}, "http://169.254.169.254", "169.254.169.254"},
		{Reach{}, "http://[fe80::1]:9000", "fe80::1"},
		{Reach{}, "http://10.96.0.1:443", "10.96.0.1"},
		{Reach{}, "http://172.16.5.4", "172.16.5.4"},
		{Reach{}, "http://192.168.1.1", "192.168.1.1"},
		{Reach{}, "http://100.64.0.7", "100.64.0.7"},
		{Reach{}, "http://127.0.0.1:9000", "127.0.0.1"},
		{Reach{}, "http://localhost:9000", "inside the cluster or the machine"},
		{Reach{}, "http://[::1]:9000", "::1"},
		{Reach{}, "http://[::ffff:10.0.0.1]", "10.0.0.1"},
		{Reach{}, "http://[fd12::1]", "fd12::1"},
		{Reach{}, "http://0.0.0.0:9000", "0.0.0.0"},
		{Reach{}, "http://224.0.0.1", "224.0.0.1"},
		{Reach{}, "https://8.8.8.8", ""},
		{Reach{}, "https://[2001:4860::8888]", ""},
		{Reach{Internal: listed}, "http://s3.quintet-s3.svc:9000", ""}, // listed by name: not even resolved
		{Reach{Internal: listed}, "http://192.168.4.4:9000", ""},
		{Reach{Internal: listed}, "http://10.0.0.1:9000", "10.0.0.1"},
		{loopback, "http://127.0.0.1:9000", ""},
		{loopback, "https://127.0.0.1:6443", "the Kubernetes API server's address"},
	} {
		err := tc.reach.check(t.Context(), tc.endpoint)
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.endpoint, err)
		case tc.refused != "" && (err == nil || ReasonOf(err) != v1beta2.ReasonEndpointNotAllowed || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("%s: got %v, want EndpointNotAllowed naming %q", tc.endpoint, err, tc.refused)
		}
	}
}

// The check before a store is opened resolves its name once; the connection checks the
// address it goes to, so a name that resolves elsewhere later is refused all the same.
func TestTheStoreConnectsOnlyWhereReachAllows(t *testing.T) {
	var requests atomic.Int32
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer server.Close()
	src := &v1beta2.S3BackupSource{Path: "bucket/key", Endpoint: strings.Replace(server.URL, "127.0.0.1", "localhost", 1), ForcePathStyle: true}
	creds := Credentials{AccessKeyID: "a", SecretAccessKey: "s", Region: "us-east-1"}

	_, err := NewS3Store(src, creds, Reach{}).Put(t.Context(), "k", strings.NewReader("data"), func() error { return nil })
	if ReasonOf(err) != v1beta2.ReasonEndpointNotAllowed || requests.Load() != 0 {
		t.Fatalf("a store on loopback, not listed: got %v and %d requests, want EndpointNotAllowed and none", err, requests.Load())
	}
	loopback := Reach{Internal: Allowlist{Nets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}
	if _, err := NewS3Store(src, creds, loopback).Put(t.Context(), "k", strings.NewReader("data"), func() error { return nil }); err != nil || requests.Load() == 0 {
		t.Fatalf("a store on loopback, listed: got %v and %d requests", err, requests.Load())
	}
}
