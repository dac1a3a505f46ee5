package manager

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
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
		args          []string
		want          bool
		wantNamespace string
	}{
		"no flags":            {nil, false, ""},
		"--leader-elect":      {[]string{"--leader-elect"}, true, ""},
		"--leader-elect=true": {[]string{"--leader-elect=true"}, true, ""},
		// A manager outside a cluster (the scale benchmark's two replicas) names the Lease's namespace.
		"with the Lease's namespace": {[]string{"--leader-elect", "--leader-election-namespace=bench"}, true, "bench"},
	}
	for name, tt := range tests {
		var f Flags
		fs := flag.NewFlagSet("manager", flag.ContinueOnError)
		f.Bind(fs)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		opts := Options("gordon", f, nil)
		if opts.LeaderElection != tt.want || opts.LeaderElectionNamespace != tt.wantNamespace || opts.LeaderElectionID != "gordon.quintet.dev" {
			t.Errorf("%s: leader election %v in %q as %q, want %v in %q as gordon.quintet.dev",
				name, opts.LeaderElection, opts.LeaderElectionNamespace, opts.LeaderElectionID, tt.want, tt.wantNamespace)
		}
	}
}

// Go's profiles are served only when asked for: they are unauthenticated.
func TestProfilesAreOffUnlessAsked(t *testing.T) {
	for args, want := range map[string]string{"": "0", "--pprof-bind-address=127.0.0.1:6060": "127.0.0.1:6060"} {
		var f Flags
		fs := flag.NewFlagSet("manager", flag.ContinueOnError)
		f.Bind(fs)
		if err := fs.Parse(strings.Fields(args)); err != nil {
			t.Fatal(err)
		}
		if got := Options("gordon", f, nil).PprofBindAddress; got != want {
			t.Errorf("%q: profiles at %q, want %q", args, got, want)
		}
	}
}

// nowhereKubeconfig points KUBECONFIG at an API server nothing answers for: nothing in New
// may need an answer.
func nowhereKubeconfig(t *testing.T) {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
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
}

// newManager builds a manager from args, with the listeners moved off their in-cluster
// ports, which another process may hold.
func newManager(t *testing.T, args ...string) ctrl.Manager {
	t.Helper()
	nowhereKubeconfig(t)
	var f Flags
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	f.Bind(fs)
	if err := fs.Parse(append([]string{"--metrics-bind-address=0", "--health-probe-bind-address=0"}, args...)); err != nil {
		t.Fatal(err)
	}
	mgr, err := New("test", f, runtime.NewScheme())
	if err != nil {
		t.Fatalf("New with %v outside a cluster: %v", args, err)
	}
	return mgr
}

// New with the default flags and a kubeconfig, outside a cluster, builds a manager: it must
// not need a namespace for a leader-election lease. Building it contacts no API server.
func TestNewBuildsAManagerOutsideACluster(t *testing.T) {
	newManager(t)
}

func TestClientLimitsAreControllerRuntimesUnlessSet(t *testing.T) {
	if cfg := newManager(t).GetConfig(); cfg.QPS > 0 {
		t.Errorf("default QPS %v: want controller-runtime's (no client-side limit)", cfg.QPS)
	}
	if cfg := newManager(t, "--kube-api-qps=50", "--kube-api-burst=100").GetConfig(); cfg.QPS != 50 || cfg.Burst != 100 {
		t.Errorf("QPS %v burst %d; want 50 and 100", cfg.QPS, cfg.Burst)
	}
}

func TestTheCacheDropsManagedFields(t *testing.T) {
	opts := Options("test", Flags{}, runtime.NewScheme())
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
	out, err := opts.Cache.DefaultTransform(pod)
	if err != nil {
		t.Fatal(err)
	}
	if fields := out.(*corev1.Pod).ManagedFields; fields != nil {
		t.Errorf("managedFields %v kept in the cache", fields)
	}
}
