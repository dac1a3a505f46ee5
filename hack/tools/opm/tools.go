//go:build tools

// Package tools pins opm, the file-based catalog tool, built from source.
package tools

import _ "github.com/operator-framework/operator-registry/cmd/opm"
