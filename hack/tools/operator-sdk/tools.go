//go:build tools

// Package tools pins operator-sdk (bundle validate, scorecard) and its helm-operator (the
// anchor make bench-minimart runs minimart against), built from source.
package tools

import (
	_ "github.com/operator-framework/operator-sdk/cmd/helm-operator"
	_ "github.com/operator-framework/operator-sdk/cmd/operator-sdk"
	_ "github.com/operator-framework/operator-sdk/images/scorecard-test"
)
