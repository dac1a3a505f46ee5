// Package crd embeds the operator's CRDs as controller-gen writes them to bases/: the manager's
// REST API documents and serves the kinds they define.
package crd

import "embed"

// Bases holds bases/*.yaml.
//
//go:embed bases/*.yaml
var Bases embed.FS
