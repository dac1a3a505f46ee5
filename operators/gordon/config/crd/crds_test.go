package crd_test

import (
	"testing"

	"github.com/quintet-operators/quintet/operators/gordon/config/crd"
	"github.com/quintet-operators/quintet/shared/restapi/restapitest"
)

// The REST API's OpenAPI document is valid and serves every kind the operator defines.
func TestTheRESTAPIServesEveryKind(t *testing.T) {
	restapitest.ExpectKinds(t, crd.Bases, "gordons")
}

// The committed OpenAPI document (make docs-api) is the one the REST API serves: the same
// CRDs, the options the manager gives the API ("gordon", as cmd/main.go names the manager).
func TestTheCommittedOpenAPIDocumentIsTheServedOne(t *testing.T) {
	restapitest.ExpectServedDocument(t, crd.Bases, "gordon", "../../../../docs/api/openapi/gordon.json")
}
