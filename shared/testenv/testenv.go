// Package testenv starts a real kube-apiserver and etcd for one test package, from the
// binaries that `make tools` builds from source into bin/. It never downloads anything:
// when the binaries are missing it fails with an error that says how to build them.
package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// KubeVersion is the Kubernetes release whose control plane the repository builds.
const KubeVersion = "v1.36.3"

// assetsEnv names the directory of control-plane binaries, as envtest itself reads it.
const assetsEnv = "KUBEBUILDER_ASSETS"

// requiredBinaries are the programs envtest runs.
var requiredBinaries = []string{"kube-apiserver", "etcd"}

// Options configure an Env.
type Options struct {
	// CRDDirectoryPaths are installed before Start returns; each must exist.
	CRDDirectoryPaths []string
	// AddToScheme registers the operator's API types, beside client-go's built-in ones.
	AddToScheme []func(*runtime.Scheme) error
}

// Env is a running API server with a client for it.
type Env struct {
	Environment *envtest.Environment
	Config      *rest.Config
	Client      client.Client
	Scheme      *runtime.Scheme
}

// AssetsDir returns the directory holding kube-apiserver and etcd: $KUBEBUILDER_ASSETS when
// set, otherwise bin/k8s-<KubeVersion> at the root of the workspace that contains dir.
func AssetsDir(dir string) (string, error) {
	assets := os.Getenv(assetsEnv)
	if assets == "" {
		root, err := workspaceRoot(dir)
		if err != nil {
			return "", err
		}
		assets = filepath.Join(root, "bin", "k8s-"+KubeVersion)
	}
	for _, name := range requiredBinaries {
		// The folder is the developer's own choice (KUBEBUILDER_ASSETS) or the workspace's bin/.
		if _, err := os.Stat(filepath.Join(assets, name)); err != nil { //nolint:gosec // see above
			return "", fmt.Errorf("control-plane binary %s not found in %s: run `make tools` at the repository root to build it from source: %w", name, assets, err)
		}
	}
	return assets, nil
}

// workspaceRoot walks up from dir to the folder holding go.work.
func workspaceRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.work above %s and %s is unset: run tests from the Quintet workspace or set %s", abs, assetsEnv, assetsEnv)
		}
	}
}

// Start runs etcd and kube-apiserver, installs the CRDs and returns a ready client.
func Start(opts Options) (*Env, error) {
	assets, err := AssetsDir(".")
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	for _, add := range append([]func(*runtime.Scheme) error{clientgoscheme.AddToScheme}, opts.AddToScheme...) {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     opts.CRDDirectoryPaths,
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting envtest with binaries from %s: %w", assets, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	return &Env{Environment: env, Config: cfg, Client: c, Scheme: scheme}, nil
}

// NewNamespace creates a namespace named prefix-<random> for one test.
func (e *Env) NewNamespace(t testing.TB, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := e.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// Stop ends the API server and etcd.
func (e *Env) Stop() error {
	return e.Environment.Stop()
}
