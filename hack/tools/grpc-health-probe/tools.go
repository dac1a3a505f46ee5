//go:build tools

// Package tools pins grpc_health_probe, which OLM's catalog pods run as their probes: the
// catalog image carries it, as upstream catalog images do.
package tools

import _ "github.com/grpc-ecosystem/grpc-health-probe"
