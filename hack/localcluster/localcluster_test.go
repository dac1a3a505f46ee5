package main

import (
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runAsLocalclusterEnv makes the test binary the localcluster command, for tests of what a
// subcommand does to its own process (exec replaces it).
const runAsLocalclusterEnv = "QUINTET_TEST_RUN_AS_LOCALCLUSTER"

func TestMain(m *testing.M) {
	if os.Getenv(runAsLocalclusterEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestIssuedCertificatesChainToTheCA(t *testing.T) {
	p, err := generatePKI(t.TempDir(), (&layout{}).certRequests())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(p.CA.cert)
	server := p.Clients["apiserver"].cert
	if _, err := server.Verify(x509.VerifyOptions{Roots: roots, DNSName: "kubernetes.default.svc"}); err != nil {
		t.Fatalf("apiserver certificate does not verify for kubernetes.default.svc: %v", err)
	}
	admin := p.Clients["admin"].cert
	if _, err := admin.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("admin certificate is not a client certificate of the CA: %v", err)
	}
	if got := admin.Subject.Organization; len(got) != 1 || got[0] != "system:masters" {
		t.Fatalf("admin organisation = %v, want [system:masters]", got)
	}
	for _, f := range []string{"ca.crt", "ca.key", "apiserver.crt", "sa.key", "sa.pub"} {
		if _, err := os.Stat(filepath.Join(p.Dir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
}

func TestKubeconfigEmbedsTheCredentials(t *testing.T) {
	p, err := generatePKI(t.TempDir(), (&layout{}).certRequests())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := writeKubeconfig(path, "https://127.0.0.1:6443", p.CA, p.Clients["admin"], "quintet-admin"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"server: https://127.0.0.1:6443",
		"certificate-authority-data: " + base64.StdEncoding.EncodeToString(p.CA.CertPEM),
		"client-key-data: " + base64.StdEncoding.EncodeToString(p.Clients["admin"].KeyPEM),
		"current-context: quintet-local",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("kubeconfig lacks %q", want)
		}
	}
}

func TestStopEndsTheProcessItStarted(t *testing.T) {
	l := testLayout(t)
	sleep := sleepBinary(t)
	if err := l.start(process{Name: "sleeper", Exe: sleep, Args: []string{"60"}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := l.running("sleeper"); !ok {
		t.Fatal("the started process is not seen as running")
	}
	if err := l.stop("sleeper", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, ok := l.running("sleeper"); ok {
		t.Fatal("the process still runs after stop")
	}
	if _, err := os.Stat(l.pidFile("sleeper")); !os.IsNotExist(err) {
		t.Fatalf("pid file left behind: %v", err)
	}
}

func TestRunningIgnoresAPidThatRunsAnotherExecutable(t *testing.T) {
	l := testLayout(t)
	// This test process is alive, but it is not the recorded executable: a reused pid.
	record := []byte(strings.Join([]string{strconv.Itoa(os.Getpid()), "/nonexistent/etcd"}, "\n"))
	if err := os.WriteFile(l.pidFile("etcd"), record, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := l.running("etcd"); ok {
		t.Fatal("a pid running another executable must not count as ours")
	}
	if err := l.stop("etcd", time.Second); err != nil {
		t.Fatalf("stop must leave foreign processes alone without error: %v", err)
	}
}

func TestDownStopsExtraProcessesRecordedInTheRunFolder(t *testing.T) {
	l := testLayout(t)
	sleep := sleepBinary(t)
	if err := l.start(process{Name: "gordon-manager", Exe: sleep, Args: []string{"60"}}); err != nil {
		t.Fatal(err)
	}
	if got := l.extraProcesses(); len(got) != 1 || got[0] != "gordon-manager" {
		t.Fatalf("extraProcesses = %v", got)
	}
	pid, _ := l.running("gordon-manager")
	if err := down(l); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && !isZombie(pid) {
		t.Fatalf("pid %d still runs after down", pid)
	}
}

func TestEveryComponentHasAProcess(t *testing.T) {
	l := testLayout(t)
	procs := l.processes()
	if len(procs) != len(componentNames) {
		t.Fatalf("%d processes for %d components", len(procs), len(componentNames))
	}
	for i, p := range procs {
		if p.Name != componentNames[i] {
			t.Errorf("process %d is %s, want %s (start order)", i, p.Name, componentNames[i])
		}
		if filepath.Dir(p.Exe) != l.Bin {
			t.Errorf("%s runs %s, outside %s", p.Name, p.Exe, l.Bin)
		}
	}
}

func testLayout(t *testing.T) *layout {
	t.Helper()
	l, err := newLayout(t.TempDir(), t.TempDir(), t.TempDir(), "coredns", "pause")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{l.Run, l.Logs} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// sleepBinary is coreutils' sleep, resolved, as /proc/<pid>/exe reports it.
func sleepBinary(t *testing.T) string {
	t.Helper()
	sleep, err := filepath.EvalSymlinks("/bin/sleep")
	if err != nil {
		t.Fatal(err)
	}
	return sleep
}
