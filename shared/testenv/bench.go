package testenv

import (
	"os"
	"strings"
	"testing"
)

// WriteBenchFigures writes a benchmark's figures, a header and a line per run, tab-separated
// (the first column names the run, the others are metrics, `name (unit)`), to the file
// BENCH_FIGURES names, when it is set: the bench target plots them (bin/docs plot).
func WriteBenchFigures(t testing.TB, header string, runs ...string) {
	t.Helper()
	path := os.Getenv("BENCH_FIGURES")
	if path == "" {
		return
	}
	if err := os.WriteFile(path, []byte(header+"\n"+strings.Join(runs, "\n")+"\n"), 0o644); err != nil { //nolint:gosec // a document
		t.Fatal(err)
	}
}
