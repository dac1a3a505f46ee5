// Package restapitest checks an operator's REST API document in the operator's own tests.
package restapitest

import (
	"context"
	"encoding/json"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

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
		if rest, ok := strings.CutPrefix(path, prefix); ok && !strings.Contains(rest, "/") {
			served = append(served, rest)
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
