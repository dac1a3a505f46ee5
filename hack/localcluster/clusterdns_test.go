package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestExecGivesTheClusterDNSOnlyToProgramsUsingThisCluster(t *testing.T) {
	l := testLayout(t)
	other := filepath.Join(t.TempDir(), "kubeconfig")
	for _, f := range []string{l.Kubeconfig, other} {
		if err := os.WriteFile(f, []byte("kind: Config\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sleep := sleepBinary(t)
	plain := []string{sleep, "1"}
	wrapped := l.withClusterDNS(sleep, []string{"1"})
	if os.Geteuid() != 0 {
		wrapped = plain // no mount namespace without root: the program still runs
	}

	check := func(what string, clusterDNS bool, kubeconfig string, want []string) {
		t.Helper()
		got, err := l.foregroundCommand([]string{sleep, "1"}, clusterDNS, kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: runs %q, want %q", what, got, want)
		}
	}
	check("no real node", true, l.Kubeconfig, plain)

	if err := os.MkdirAll(filepath.Dir(l.hostResolvConf()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.hostResolvConf(), []byte("nameserver "+hostIP+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	check("this cluster's kubeconfig, real node DNS", true, l.Kubeconfig, wrapped)
	relative, err := filepath.Rel(mustGetwd(t), l.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	check("the same kubeconfig by a relative path", true, relative, wrapped)
	check("another cluster's kubeconfig", true, other, plain)
	check("no KUBECONFIG (~/.kube/config)", true, "", plain)
	check("--cluster-dns not asked for", false, l.Kubeconfig, plain)
}

// localclusterCommand runs this test binary as the localcluster command (see TestMain).
func localclusterCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...) //nolint:gosec // this test binary
	cmd.Env = append(os.Environ(), runAsLocalclusterEnv+"=1")
	return cmd
}

// exec hands its process over: the program has localcluster's pid (so the terminal's Ctrl-C
// and the caller's wait reach it) and, with this cluster's kubeconfig and the real node's
// DNS, the cluster's resolv.conf, while the host's stays as it was.
func TestExecRunsTheProgramInItsPlaceWithTheClusterResolvConf(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a mount namespace needs root")
	}
	l := testLayout(t)
	if err := os.MkdirAll(filepath.Dir(l.hostResolvConf()), 0o755); err != nil {
		t.Fatal(err)
	}
	clusterResolvConf := "nameserver " + hostIP + "\nsearch " + clusterDomain + "\n# " + t.Name() + "\n"
	if err := os.WriteFile(l.hostResolvConf(), []byte(clusterResolvConf), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.Kubeconfig, []byte("kind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hostBefore, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		t.Fatal(err)
	}

	cmd := localclusterCommand(t, "exec", "--dir", l.Root, "--cluster-dns", "--", "sh", "-c", `echo "pid $$"; cat /etc/resolv.conf`)
	cmd.Env = append(cmd.Env, "KUBECONFIG="+l.Kubeconfig)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Run(); err != nil {
		t.Fatalf("localcluster exec: %v\n%s", err, stdout.String())
	}
	want := fmt.Sprintf("pid %d\n%s", cmd.Process.Pid, clusterResolvConf)
	if stdout.String() != want {
		t.Errorf("the program printed\n%s\nwant its pid and the cluster's resolv.conf:\n%s", stdout.String(), want)
	}
	hostAfter, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		t.Fatal(err)
	}
	if string(hostAfter) != string(hostBefore) {
		t.Errorf("the host's /etc/resolv.conf changed:\n%s", hostAfter)
	}
}

func TestExecPassesTheProgramsExitStatusOn(t *testing.T) {
	l := testLayout(t)
	cmd := localclusterCommand(t, "exec", "--dir", l.Root, "--cluster-dns", "--", "sh", "-c", "exit 7")
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 7 {
		t.Fatalf("localcluster exec of a program exiting 7: %v", err)
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}
