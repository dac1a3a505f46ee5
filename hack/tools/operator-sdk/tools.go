//go:build tools

// Package tools pins operator-sdk (bundle validate, scorecard), built from source.
package tools

import (
	_ "github.com/operator-framework/operator-sdk/cmd/operator-sdk"
	_ "github.com/operator-framework/operator-sdk/images/scorecard-test"
)
