package main

import (
	"fmt"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"sigs.k8s.io/yaml"
)

// catalogConfigsLabel tells OLM and opm where a catalog image keeps its file-based catalog.
const catalogConfigsLabel = "operators.operatorframework.io.index.configs.v1"

// bundleImage is the image bundle.Dockerfile describes: the bundle's manifests/, metadata/
// and tests/scorecard/ at the root, labelled with metadata/annotations.yaml.
func bundleImage(dir string) (v1.Image, error) {
	data, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		return nil, err
	}
	var metadata struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.UnmarshalStrict(data, &metadata); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if len(metadata.Annotations) == 0 {
		return nil, fmt.Errorf("%s: metadata/annotations.yaml has no annotations", dir)
	}
	var files []tarEntry
	for _, sub := range []string{"manifests", "metadata", "tests/scorecard"} {
		entries, err := treeEntries(filepath.Join(dir, sub), "/"+sub)
		if err != nil {
			return nil, err
		}
		files = append(files, entries...)
	}
	return buildImage(files, imageConfig{labels: metadata.Annotations})
}

// catalogImage is a catalog image as `opm generate dockerfile` describes it: opm serving the
// file-based catalog at /configs over gRPC on port 50051, and grpc_health_probe, which OLM's
// catalog pods run as their probes; with a shell (a static busybox) at /bin/sh too, which
// `operator-sdk run bundle` needs of its index image (its registry pod runs `sh -c "opm serve"`).
func catalogImage(catalogDir, opm, healthProbe, shell string) (v1.Image, error) {
	binary, err := fileEntry(opm, "/bin/opm", 0o755)
	if err != nil {
		return nil, err
	}
	probe, err := fileEntry(healthProbe, "/bin/grpc_health_probe", 0o755)
	if err != nil {
		return nil, err
	}
	files := []tarEntry{binary, probe}
	if shell != "" {
		sh, err := fileEntry(shell, "/bin/sh", 0o755)
		if err != nil {
			return nil, err
		}
		files = append(files, sh)
	}
	configs, err := treeEntries(catalogDir, "/configs")
	if err != nil {
		return nil, err
	}
	return buildImage(append(files, configs...), imageConfig{
		entrypoint: []string{"/bin/opm"},
		// The cache is built when opm starts (upstream images build it into the image, which
		// then needs --cache-only run at build time): a small catalog starts in well under a second.
		cmd:    []string{"serve", "/configs", "--cache-dir=/tmp/cache", "--cache-enforce-integrity=false"},
		labels: map[string]string{catalogConfigsLabel: "/configs"},
	})
}
