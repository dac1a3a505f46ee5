//go:build tools

// Package tools pins the helm CLI, built from source: `make charts` lints and renders the
// operators' charts with it, and the e2e suite installs them.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
