package crd_test

import (
	"testing"

	"github.com/quintet-operators/quintet/operators/ptemplate-device/config/crd"
	"github.com/quintet-operators/quintet/shared/restapi/restapitest"
)

// The REST API's OpenAPI document is valid and serves every kind the operator defines.
func TestTheRESTAPIServesEveryKind(t *testing.T) {
	restapitest.ExpectKinds(t, crd.Bases, "ptemplates")
}

// The committed OpenAPI document (make docs-api) is the one the REST API serves: the same
// CRDs, the options the manager gives the API ("ptemplate-device", as cmd/main.go names the manager).
func TestTheCommittedOpenAPIDocumentIsTheServedOne(t *testing.T) {
	restapitest.ExpectServedDocument(t, crd.Bases, "ptemplate-device", "../../../../docs/api/openapi/ptemplate-device.json")
}
