package testenv

import (
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// LogRecorder keeps every line a logger writes, as `name "message" key=value ...`, so a test
// can check what a controller logs: one line per change, nothing on an idle pass.
type LogRecorder struct {
	mu    sync.Mutex
	lines []string
}

// NewLogRecorder returns a recorder and a logger that writes into it what a manager logs by
// default: info level (V(0)) and errors.
func NewLogRecorder() (*LogRecorder, logr.Logger) {
	r := &LogRecorder{}
	return r, funcr.New(func(prefix, args string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.lines = append(r.lines, prefix+" "+args)
	}, funcr.Options{})
}

// Len is the number of lines so far: a mark for Since.
func (r *LogRecorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.lines)
}

// Since returns the lines after mark that contain every one of the substrings.
func (r *LogRecorder) Since(mark int, substrings ...string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, line := range r.lines[mark:] {
		if containsAll(line, substrings) {
			out = append(out, line)
		}
	}
	return out
}

func containsAll(s string, substrings []string) bool {
	for _, sub := range substrings {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
