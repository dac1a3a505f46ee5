// Package restapitest checks an operator's REST API document in the operator's own tests.
package restapitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"k8s.io/client-go/rest"

	"github.com/quintet-operators/quintet/shared/manager"
	"github.com/quintet-operators/quintet/shared/restapi"
)

// Document builds the REST API's OpenAPI document for the CRDs in crds and checks it with
// kin-openapi's loader and validator, as an OpenAPI 3 tool reads it.
func Document(t testing.TB, crds fs.FS) *openapi3.T {
	t.Helper()
	kinds, err := restapi.KindsFromCRDs(crds)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := restapi.Document("test", "v1", kinds)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := loaded.Validate(context.Background()); err != nil {
		t.Fatalf("the document is not valid OpenAPI 3: %v", err)
	}
	return loaded
}

// ExpectKinds checks that the document of crds is valid and serves exactly the plurals,
// each with its collection (list, create) and item (read, replace, patch, delete) operations.
func ExpectKinds(t testing.TB, crds fs.FS, plurals ...string) {
	t.Helper()
	doc := Document(t, crds)
	const prefix = "/api/v1/namespaces/{namespace}/"
	var served []string
	for path := range doc.Paths.Map() {
		if plural, ok := strings.CutPrefix(path, prefix); ok && !strings.Contains(plural, "/") {
			served = append(served, plural)
		}
	}
	slices.Sort(served)
	want := slices.Sorted(slices.Values(plurals))
	if !slices.Equal(served, want) {
		t.Fatalf("the REST API serves %v, want %v", served, want)
	}
	for _, plural := range plurals {
		collection, item := doc.Paths.Find(prefix+plural), doc.Paths.Find(prefix+plural+"/{name}")
		if collection == nil || item == nil || collection.Get == nil || collection.Post == nil ||
			item.Get == nil || item.Put == nil || item.Patch == nil || item.Delete == nil {
			t.Errorf("%s lacks an operation", plural)
		}
	}
}

// ExpectServedDocument fails t unless the file at path (docs/api/openapi/<operator>.json,
// written by `make docs-api`) holds, indented, exactly the document the operator's REST API
// serves at /api/v1/openapi.json: a Handler for crds, with the options the manager builds it
// with (manager.APIOptions), asked over HTTP.
func ExpectServedDocument(t testing.TB, crds fs.FS, operator, path string) {
	t.Helper()
	kinds, err := restapi.KindsFromCRDs(crds)
	if err != nil {
		t.Fatal(err)
	}
	h, err := restapi.NewHandler(&rest.Config{Host: "https://127.0.0.1:1"}, kinds, manager.APIOptions(operator))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /api/v1/openapi.json: %d %s", rec.Code, rec.Body)
	}
	var served bytes.Buffer
	if err := json.Indent(&served, rec.Body.Bytes(), "", "  "); err != nil {
		t.Fatal(err)
	}
	served.WriteByte('\n')
	committed, err := os.ReadFile(path) //nolint:gosec // a path of the repository the test names
	if err != nil {
		t.Fatalf("%v: run make docs-api", err)
	}
	if !bytes.Equal(committed, served.Bytes()) {
		t.Fatalf("%s is not the document the REST API serves: run make docs-api and commit the result", path)
	}
}
