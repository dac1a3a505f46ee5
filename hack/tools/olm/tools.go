//go:build tools

// Package tools pins OLM v0's olm-operator, catalog-operator and cpb (for bundle unpack Jobs),
// built from source, and carries its CRDs (deploy/chart/crds) for `make olm-up`.
package tools

import (
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/catalog"
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/olm"
	_ "github.com/operator-framework/operator-lifecycle-manager/util/cpb"
)
