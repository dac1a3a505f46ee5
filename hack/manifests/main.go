// Command manifests holds the checks of the manifests Quintet ships that other tools do not
// do alone. `manifests schemas` writes the JSON schemas kubeconform validates against, offline:
// every kind of the Kubernetes version the project builds, from that version's own OpenAPI
// document, and every kind of the given CRDs. `manifests rules` checks an operator's
// PrometheusRule (severities, annotations, a runbook on the operator's page for every alert, a
// promtool test in which each fires and one in which it stays silent) and writes what promtool
// tests.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: manifests schemas|rules [flags] FILE...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "schemas":
		err = runSchemas(os.Args[2:])
	case "rules":
		err = runRules(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "manifests:", err)
		os.Exit(1)
	}
}
