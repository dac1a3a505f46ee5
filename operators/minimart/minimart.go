// Package minimart embeds what the manager runs: watches.yaml, which names the kind it
// reconciles and the chart it installs for each object of it, and the chart under
// helm-charts/.
package minimart

//go:generate go run ./cmd/values-schema -crd config/crd/bases/charts.samutup.com_minimarts.yaml -out helm-charts/minimart/values.schema.json

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

//go:embed watches.yaml all:helm-charts
var files embed.FS

// Watch is one entry of watches.yaml.
type Watch struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
	Chart   string `json:"chart"`
}

// GroupVersionKind is the kind the entry reconciles.
func (w Watch) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: w.Group, Version: w.Version, Kind: w.Kind}
}

// WatchFor returns the entry of watches.yaml for gvk and its chart, loaded from the binary.
func WatchFor(gvk schema.GroupVersionKind) (Watch, *chart.Chart, error) {
	watches, err := parseWatches(files)
	if err != nil {
		return Watch{}, nil, err
	}
	for _, w := range watches {
		if w.GroupVersionKind() == gvk {
			c, err := loadChart(files, w.Chart)
			return w, c, err
		}
	}
	return Watch{}, nil, fmt.Errorf("watches.yaml has no entry for %s", gvk)
}

func parseWatches(fsys fs.FS) ([]Watch, error) {
	data, err := fs.ReadFile(fsys, "watches.yaml")
	if err != nil {
		return nil, err
	}
	var watches []Watch
	if err := yaml.UnmarshalStrict(data, &watches); err != nil {
		return nil, fmt.Errorf("watches.yaml: %w", err)
	}
	return watches, nil
}

// loadChart loads the chart in folder dir of fsys.
func loadChart(fsys fs.FS, dir string) (*chart.Chart, error) {
	var chartFiles []*loader.BufferedFile
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		chartFiles = append(chartFiles, &loader.BufferedFile{Name: strings.TrimPrefix(p, path.Clean(dir)+"/"), Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", dir, err)
	}
	c, err := loader.LoadFiles(chartFiles)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", dir, err)
	}
	return c, nil
}
