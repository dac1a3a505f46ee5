// Command dashboards writes each operator's Grafana dashboard, from Go with Grafana's
// foundation SDK, as operators/<operator>/config/prometheus/dashboard.json: what the operator
// itself does (reconciles, errors, latency, queues, objects not Ready or Degraded) and what it
// knows of its objects (its own metrics). config/prometheus ships it in a ConfigMap labelled
// grafana_dashboard=1, which Grafana's dashboard sidecar (kube-prometheus-stack) loads.
//
//	dashboards --root .    write every operator's dashboard.json under ROOT
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	root := flag.String("root", ".", "the repository's root")
	flag.Parse()
	if err := write(*root); err != nil {
		fmt.Fprintln(os.Stderr, "dashboards:", err)
		os.Exit(1)
	}
}

// write writes every operator's dashboard under root.
func write(root string) error {
	for op, build := range operators {
		d, err := build().Build()
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		data, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		path := filepath.Join(root, "operators", op, "config", "prometheus", "dashboard.json")
		if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil { //nolint:gosec // a committed file, world-readable as the rest
			return err
		}
	}
	return nil
}
