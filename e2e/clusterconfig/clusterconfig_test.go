package clusterconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKubeconfigPathPrefersTheEnvironment(t *testing.T) {
	t.Setenv("KUBECONFIG", "/somewhere/config")
	got, err := KubeconfigPath(t.TempDir())
	if err != nil || got != "/somewhere/config" {
		t.Fatalf("KubeconfigPath = %q, %v", got, err)
	}
}

func TestKubeconfigPathFallsBackToTheWorkspaceLocalCluster(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.work"), []byte("go 1.26.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	nested := filepath.Join(root, "e2e", "gordon")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := KubeconfigPath(nested)
	if want := filepath.Join(root, ".local", "kubeconfig"); err != nil || got != want {
		t.Fatalf("KubeconfigPath = %q, %v; want %q", got, err, want)
	}
}

func TestConfigExplainsHowToStartTheClusterWhenItIsMissing(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "absent"))
	_, err := Config()
	if err == nil || !strings.Contains(err.Error(), "make cluster-up") {
		t.Fatalf("want an error naming `make cluster-up`, got %v", err)
	}
}
