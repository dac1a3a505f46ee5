//go:build bench

package e2e

import (
	"os"
	"strings"
	"testing"
)

// writeBenchFigures writes a benchmark's figures, a header and a line per run, tab-separated
// (the first column names the run, the others are metrics, `name (unit)`), to the file
// BENCH_FIGURES names, when it is set: the bench target plots them (bin/docs plot).
func writeBenchFigures(t *testing.T, header string, runs ...string) {
	path := os.Getenv("BENCH_FIGURES")
	if path == "" {
		return
	}
	must(t, os.WriteFile(path, []byte(header+"\n"+strings.Join(runs, "\n")+"\n"), 0o644)) //nolint:gosec // a document
}
