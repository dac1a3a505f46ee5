package manager

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestWatchNamespaces(t *testing.T) {
	tests := map[string][]string{
		"":                     nil,
		"team-a":               {"team-a"},
		"team-a,team-b":        {"team-a", "team-b"},
		" team-a , ,team-b , ": {"team-a", "team-b"},
	}
	for value, want := range tests {
		if got := WatchNamespaces(value); !slices.Equal(got, want) {
			t.Errorf("WatchNamespaces(%q) = %v, want %v", value, got, want)
		}
	}
}

// A manager run outside a cluster (`make run`) has no namespace to hold a lease in; the
// Deployments ask for election with --leader-elect, as kubebuilder's scaffold does.
func TestLeaderElectionIsOffUnlessAsked(t *testing.T) {
	tests := map[string]struct {
		args []string
		want bool
	}{
		"no flags":            {nil, false},
		"--leader-elect":      {[]string{"--leader-elect"}, true},
		"--leader-elect=true": {[]string{"--leader-elect=true"}, true},
	}
	for name, tt := range tests {
		var f Flags
		fs := flag.NewFlagSet("manager", flag.ContinueOnError)
		f.Bind(fs)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		if f.LeaderElect != tt.want {
			t.Errorf("%s: LeaderElect = %v, want %v", name, f.LeaderElect, tt.want)
		}
	}
}

// New with the default flags and a kubeconfig, outside a cluster, builds a manager: it must
// not need a namespace for a leader-election lease. Building it contacts no API server.
func TestNewBuildsAManagerOutsideACluster(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	// Nothing listens on port 1: nothing in New may need an answer.
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: nowhere, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: nobody, user: {token: none}}]
contexts: [{name: nowhere, context: {cluster: nowhere, user: nobody}}]
current-context: nowhere
`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	t.Setenv(WatchNamespaceEnv, "")

	var f Flags
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	f.Bind(fs)
	// Only the listeners are moved off their in-cluster ports, which another process may hold.
	if err := fs.Parse([]string{"--metrics-bind-address=0", "--health-probe-bind-address=0"}); err != nil {
		t.Fatal(err)
	}
	if _, err := New("test", f, runtime.NewScheme()); err != nil {
		t.Fatalf("New with the default flags outside a cluster: %v", err)
	}
}
