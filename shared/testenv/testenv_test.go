package testenv

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestAssetsDirNamesMakeToolsWhenBinariesAreMissing(t *testing.T) {
	t.Setenv(assetsEnv, t.TempDir())
	_, err := AssetsDir(".")
	if err == nil || !strings.Contains(err.Error(), "make tools") {
		t.Fatalf("want an error naming `make tools`, got %v", err)
	}
}

func TestAssetsDirFailsOutsideAWorkspace(t *testing.T) {
	t.Setenv(assetsEnv, "")
	_, err := AssetsDir(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "go.work") {
		t.Fatalf("want an error naming go.work, got %v", err)
	}
}

func TestAssetsDirFindsTheWorkspaceBinaries(t *testing.T) {
	t.Setenv(assetsEnv, "")
	root := t.TempDir()
	bin := filepath.Join(root, "bin", "k8s-"+KubeVersion)
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range requiredBinaries {
		if err := os.WriteFile(filepath.Join(bin, name), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "go.work"), []byte("go 1.26.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	nested := filepath.Join(root, "operators", "x")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := AssetsDir(nested)
	if err != nil || got != bin {
		t.Fatalf("AssetsDir = %q, %v; want %q", got, err, bin)
	}
}

func TestStartServesARealAPIServer(t *testing.T) {
	env, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "testenv-smoke"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	got := &corev1.Namespace{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ns), got); err != nil {
		t.Fatal(err)
	}
	if got.UID == "" {
		t.Fatal("the API server returned a namespace without a UID")
	}
}
