// Command failure-digest prints, from ginkgo's JSON report, a short account of each spec that
// did not pass: where it failed, the step it was in, and the first lines of its message.
//
// make e2e prints it last when a suite fails, so the end of a CI log (often all that is kept)
// says why, not only which spec: ginkgo's own closing summary gives names and lines alone.
//
//	go run ./cmd/failure-digest REPORT.json
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/onsi/ginkgo/v2/types"
)

const (
	messageLines = 12  // of a failure's message
	lineWidth    = 400 // characters of one line
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: failure-digest REPORT.json")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1]) //nolint:gosec // the report the caller names
	if err != nil {
		fmt.Fprintln(os.Stderr, "failure-digest:", err)
		os.Exit(1)
	}
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil {
		fmt.Fprintf(os.Stderr, "failure-digest: %s is not a ginkgo JSON report: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	var all types.SpecReports
	for _, r := range reports {
		all = append(all, r.SpecReports...)
	}
	failed := all.WithState(types.SpecStateFailureStates)
	for i, spec := range failed {
		fmt.Print(digest(i+1, len(failed), spec))
	}
}

// digest is one failed spec's account.
func digest(n, of int, spec types.SpecReport) string {
	var b strings.Builder
	f := spec.Failure
	fmt.Fprintf(&b, "=== e2e failure %d of %d [%s] %s\n", n, of, spec.State, spec.FullText())
	fmt.Fprintf(&b, "    in [%s] at %s, %s into the spec (process %d)\n", f.FailureNodeType, short(f.Location),
		f.TimelineLocation.Time.Sub(spec.StartTime).Round(1e9), spec.ParallelProcess)
	if step, ok := lastStep(spec, f.TimelineLocation.Order); ok {
		fmt.Fprintf(&b, "    step: %s (%s)\n", clip(step.Message), short(step.CodeLocation))
	}
	writeMessage(&b, f.Message)
	if f.ForwardedPanic != "" {
		fmt.Fprintf(&b, "    panic: %s\n", clip(f.ForwardedPanic))
	}
	if where := specCode(f.ProgressReport); where != "" {
		fmt.Fprintf(&b, "    the spec was at: %s\n", where)
	}
	if extra := f.AdditionalFailure; extra != nil {
		fmt.Fprintf(&b, "    then [%s] at %s:\n", extra.State, short(extra.Failure.Location))
		writeMessage(&b, extra.Failure.Message)
	}
	return b.String()
}

// lastStep is the last By step that began before the failure.
func lastStep(spec types.SpecReport, before int) (types.SpecEvent, bool) {
	var step types.SpecEvent
	found := false
	for _, e := range spec.SpecEvents {
		if e.SpecEventType == types.SpecEventByStart && e.TimelineLocation.Order <= before {
			step, found = e, true
		}
	}
	return step, found
}

func writeMessage(b *strings.Builder, message string) {
	lines := strings.Split(strings.TrimSpace(message), "\n")
	for i, line := range lines {
		if i == messageLines {
			fmt.Fprintf(b, "    | ... %d more lines in the log\n", len(lines)-messageLines)
			break
		}
		fmt.Fprintf(b, "    | %s\n", clip(line))
	}
}

// specCode is the spec goroutine's calls in the suite's own files, innermost first, from the
// progress report a timeout or an interrupt takes.
func specCode(report types.ProgressReport) string {
	var calls []string
	for _, g := range report.Goroutines {
		if !g.IsSpecGoroutine {
			continue
		}
		for _, call := range g.Stack {
			if call.Highlight {
				calls = append(calls, fmt.Sprintf("%s:%d", filepath.Base(call.Filename), call.Line))
			}
		}
	}
	return strings.Join(calls, " < ")
}

func short(l types.CodeLocation) string {
	if l.FileName == "" {
		return l.String()
	}
	return fmt.Sprintf("%s:%d", filepath.Base(l.FileName), l.LineNumber)
}

func clip(s string) string {
	if len(s) > lineWidth {
		return s[:lineWidth] + "…"
	}
	return s
}
