//go:build !linux

package manager

import "github.com/go-logr/logr"

// adviseRandomReads does nothing but on Linux, where managers run (readahead_linux.go).
func adviseRandomReads(logr.Logger) {}
