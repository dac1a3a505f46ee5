//go:build tools

// Package tools pins CoreDNS, the local cluster's DNS server on the real node's bridge.
package tools

import (
	_ "github.com/coredns/coredns"
)
