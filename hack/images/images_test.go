package main

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// files lists the paths in an image's only layer.
func files(t *testing.T, img v1.Image) []string {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %d, err %v", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	var names []string
	r := tar.NewReader(rc)
	for {
		hdr, err := r.Next()
		if errors.Is(err, io.EOF) {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, hdr.Name)
	}
}

func TestBundleImageIsWhatTheBundleDockerfileDescribes(t *testing.T) {
	img, err := bundleImage("../../bundles/gordon/0.2.0")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Config.Labels["operators.operatorframework.io.bundle.package.v1"]; got != "quintet-gordon" {
		t.Errorf("package label %q", got)
	}
	dockerfile, err := os.ReadFile("../../bundles/gordon/0.2.0/bundle.Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range cfg.Config.Labels {
		if !strings.Contains(string(dockerfile), "LABEL "+k+"="+v+"\n") {
			t.Errorf("label %s=%s is not in bundle.Dockerfile", k, v)
		}
	}
	names := files(t, img)
	for _, want := range []string{"manifests/quintet-gordon.clusterserviceversion.yaml", "metadata/annotations.yaml", "tests/scorecard/config.yaml"} {
		if !slices.Contains(names, want) {
			t.Errorf("no %s in %v", want, names)
		}
	}
}

func TestCatalogImageServesTheCatalogWithOpm(t *testing.T) {
	opm := filepath.Join(t.TempDir(), "opm")
	if err := os.WriteFile(opm, []byte("#!/bin/true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	img, err := catalogImage("../../catalog", opm, opm, opm)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.Labels[catalogConfigsLabel] != "/configs" || !slices.Equal(cfg.Config.Entrypoint, []string{"/bin/opm"}) ||
		!slices.Contains(cfg.Config.Cmd, "/configs") {
		t.Errorf("config %+v", cfg.Config)
	}
	names := files(t, img)
	for _, want := range []string{"bin/opm", "bin/grpc_health_probe", "bin/sh", "configs/quintet-gordon/catalog.yaml"} {
		if !slices.Contains(names, want) {
			t.Errorf("no %s in %v", want, names)
		}
	}
}

func TestPushSendsTheTarballsImageToItsReference(t *testing.T) {
	server := httptest.NewServer(registry.New())
	defer server.Close()
	host := strings.TrimPrefix(server.URL, "http://")
	ref, err := name.NewTag(host+"/quintet/bundle:v1", name.StrictValidation)
	if err != nil {
		t.Fatal(err)
	}
	img, err := bundleImage("../../bundles/gordon/0.2.0")
	if err != nil {
		t.Fatal(err)
	}
	again, err := bundleImage("../../bundles/gordon/0.2.0")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := img.Digest()
	if d, _ := again.Digest(); d != want {
		t.Fatalf("two builds of the same bundle differ: %s, %s", want, d)
	}
	path := filepath.Join(t.TempDir(), tarballName(ref))
	if err := tarball.WriteToFile(path, ref, img); err != nil {
		t.Fatal(err)
	}
	pushed, err := push(path)
	if err != nil {
		t.Fatal(err)
	}
	if pushed != ref.String()+"@"+want.String() {
		t.Errorf("pushed %s", pushed)
	}
	got, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := got.Digest(); d != want {
		t.Errorf("the registry serves %s, pushed %s", d, want)
	}
}

func TestRegistryListensOnLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:5000", "10.0.0.1:5000", ":5000"} {
		if err := serveRegistry("127.0.0.1:0", addr, t.TempDir(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("TLS on %s: err %v", addr, err)
		}
		if err := serveRegistry(addr, "", t.TempDir(), ""); err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("%s: err %v", addr, err)
		}
	}
}

func TestImageOfSeveralBinariesStartsTheFirst(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"cp", "cpb"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	img, err := binariesImage(filepath.Join(dir, "cpb") + ":/bin/cpb," + filepath.Join(dir, "cp") + ":/bin/cp")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Config.Entrypoint, []string{"/bin/cpb"}) || cfg.Config.User != "65532:65532" {
		t.Errorf("config %+v", cfg.Config)
	}
	if names := files(t, img); !slices.Contains(names, "bin/cp") || !slices.Contains(names, "bin/cpb") {
		t.Errorf("files %v", names)
	}
	if _, err := binariesImage(filepath.Join(dir, "cp") + ":bin/cp"); err == nil {
		t.Error("a relative path in the image must be refused")
	}
}

func TestRegistryCertificateIsIssuedByAKeptCA(t *testing.T) {
	dir := t.TempDir()
	cert, err := registryCertificate(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := registryCertificate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(cert.Certificate[1], again.Certificate[1]) {
		t.Fatal("the CA must be made once and kept")
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
}
