// Package clusterconfig connects the e2e suites and benchmarks to the cluster they run
// against: $KUBECONFIG when set, otherwise the embedded local cluster's .local/kubeconfig at
// the workspace root.
package clusterconfig

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// KubeconfigPath returns $KUBECONFIG, or .local/kubeconfig under the go.work folder above dir.
func KubeconfigPath(dir string) (string, error) {
	if p := os.Getenv("KUBECONFIG"); p != "" {
		return p, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return filepath.Join(d, ".local", "kubeconfig"), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("KUBECONFIG is unset and no go.work is above %s", abs)
		}
	}
}

// Config loads the REST config of the cluster, failing with a hint when it is not running.
func Config() (*rest.Config, error) {
	path, err := KubeconfigPath(".")
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no kubeconfig at %s: start the local cluster with `make cluster-up` or set KUBECONFIG", path)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	return cfg, nil
}
