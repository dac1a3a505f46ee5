// Package prometheus embeds this folder's monitoring objects: under --install-monitoring,
// which only the OLM bundle's CSV passes, the manager applies them in its own namespace
// whenever the cluster serves prometheus-operator's kinds (package monitoring says why).
package prometheus

import (
	"embed"

	"github.com/quintet-operators/quintet/shared/monitoring"
)

//go:embed monitor.yaml prometheus_rule.yaml dashboard.json
var files embed.FS

// Monitoring is the operator's monitoring, as the manager applies it.
var Monitoring = monitoring.Set{Operator: "ptemplate-device", Files: files}
