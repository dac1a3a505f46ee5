// Command manifests holds the checks of the manifests Quintet ships that other tools do not
// do alone. `manifests schemas` writes the JSON schemas kubeconform validates against, offline:
// every kind of the Kubernetes version the project builds, from that version's own OpenAPI
// document, and every kind of the given CRDs.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: manifests schemas --openapi SWAGGER.json --out DIR CRD.yaml...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "schemas":
		err = runSchemas(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "manifests:", err)
		os.Exit(1)
	}
}
