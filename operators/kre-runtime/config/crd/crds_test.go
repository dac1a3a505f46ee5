package crd_test

import (
	"testing"

	"github.com/quintet-operators/quintet/operators/kre-runtime/config/crd"
	"github.com/quintet-operators/quintet/shared/restapi/restapitest"
)

// The REST API's OpenAPI document is valid and serves every kind the operator defines.
func TestTheRESTAPIServesEveryKind(t *testing.T) {
	restapitest.ExpectKinds(t, crd.Bases, "runtimes", "runtimeversions")
}

// The committed OpenAPI document (make docs-api) is the one the REST API serves: the same
// CRDs, the options the manager gives the API ("kre-runtime", as cmd/main.go names the manager).
func TestTheCommittedOpenAPIDocumentIsTheServedOne(t *testing.T) {
	restapitest.ExpectServedDocument(t, crd.Bases, "kre-runtime", "../../../../docs/api/openapi/kre-runtime.json")
}
