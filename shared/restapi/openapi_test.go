package restapi_test

import (
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/client-go/rest"

	"github.com/quintet-operators/quintet/shared/internal/testkind"
	"github.com/quintet-operators/quintet/shared/restapi"
	"github.com/quintet-operators/quintet/shared/restapi/restapitest"
)

var widgetCRDs = testkind.CRDs

func TestDocumentIsValidOpenAPIWithTheCRDSchema(t *testing.T) {
	restapitest.ExpectKinds(t, widgetCRDs, "widgets")
	doc := restapitest.Document(t, widgetCRDs)
	item := doc.Paths.Find("/api/v1/namespaces/{namespace}/widgets/{name}")
	if item.Patch.RequestBody.Value.Content.Get("application/merge-patch+json") == nil ||
		item.Patch.RequestBody.Value.Content.Get("application/apply-patch+yaml") == nil {
		t.Fatal("PATCH documents merge patch and server-side apply")
	}
	widget := doc.Components.Schemas["Widget"].Value.Properties["spec"].Value.Properties["widget"].Value
	replicas := widget.Properties["replicas"].Value
	if replicas.Min == nil || *replicas.Min != 0 || replicas.Max == nil || *replicas.Max != 1000 {
		t.Errorf("the CRD's bounds are documented: min %v max %v", replicas.Min, replicas.Max)
	}
	if len(widget.Properties["imagePullPolicy"].Value.Enum) != 3 {
		t.Errorf("the CRD's enums are documented: %v", widget.Properties["imagePullPolicy"].Value.Enum)
	}
	image := widget.Properties["image"].Value
	if image.Extensions["x-kubernetes-validations"] == nil || !strings.Contains(image.Description, "image must not contain spaces") {
		t.Errorf("CEL rules are kept and described: %q", image.Description)
	}
	if len(doc.Components.SecuritySchemes) != 1 || doc.Components.SecuritySchemes["bearerAuth"].Value.Scheme != "bearer" {
		t.Error("the document asks for a bearer token")
	}
}

func TestKindsFromCRDsRefusesWhatItCannotServe(t *testing.T) {
	for name, crd := range map[string]string{
		"cluster-scoped": "kind: CustomResourceDefinition\nspec: {group: g, scope: Cluster, names: {kind: K, plural: ks}, versions: [{name: v1, served: true, storage: true}]}",
		"not a CRD":      "kind: ConfigMap",
		"no storage":     "kind: CustomResourceDefinition\nspec: {group: g, scope: Namespaced, names: {kind: K, plural: ks}, versions: [{name: v1, served: true}]}",
	} {
		if _, err := restapi.KindsFromCRDs(fstest.MapFS{"crd.yaml": {Data: []byte(crd)}}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Every operation is described and tagged with a declared, described tag; the document says
// who maintains the API and its licence; every answer, the default one included, has a schema.
func TestDocumentDescribesEveryOperationAndAnswer(t *testing.T) {
	doc := restapitest.Document(t, widgetCRDs)
	if c := doc.Info.Contact; c == nil || c.Name != "Quintet maintainers" || c.URL != "https://github.com/quintet-operators/quintet" {
		t.Errorf("info.contact: %+v", doc.Info.Contact)
	}
	if l := doc.Info.License; l == nil || l.Name != "Apache-2.0" || l.URL != "https://www.apache.org/licenses/LICENSE-2.0" {
		t.Errorf("info.license: %+v", doc.Info.License)
	}
	declared := map[string]bool{}
	for _, tag := range doc.Tags {
		declared[tag.Name] = tag.Description != ""
	}
	operations := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			operations++
			if op.Description == "" || op.Summary == "" {
				t.Errorf("%s %s has no description or summary", method, path)
			}
			for _, tag := range op.Tags {
				if !declared[tag] {
					t.Errorf("%s %s: tag %s is not declared with a description", method, path, tag)
				}
			}
			if op.Responses.Default() == nil {
				t.Errorf("%s %s has no default answer", method, path)
			}
			for code, r := range op.Responses.Map() {
				media := r.Value.Content.Get("application/json")
				if media == nil || media.Schema == nil || (media.Schema.Ref == "" && len(media.Schema.Value.AnyOf) == 0) {
					t.Errorf("%s %s %s has no schema", method, path, code)
				}
			}
		}
	}
	if operations != 6 {
		t.Errorf("%d operations documented, want 6", operations)
	}
}

// handlerErrorCodes are the codes the handler answers with a Status of its own, read from its
// source: every writeStatus call's code.
func handlerErrorCodes(t *testing.T) map[int]bool {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if fun, _ := call.Fun.(*ast.Ident); fun == nil || fun.Name != "writeStatus" {
				return true
			}
			sel, ok := call.Args[1].(*ast.SelectorExpr)
			if pkg, _ := sel.X.(*ast.Ident); !ok || pkg == nil || pkg.Name != "http" {
				t.Fatalf("%s: writeStatus's code is not an http.Status constant", fset.Position(call.Pos()))
			}
			names = append(names, "http."+sel.Sel.Name)
			return true
		})
	}
	// The constants' values, as the compiler sees them.
	src := "package p\nimport \"net/http\"\nvar codes = []int{" + strings.Join(names, ", ") + "}\n"
	file, err := parser.ParseFile(fset, "codes.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	if _, err := (&types.Config{Importer: importer.Default()}).Check("p", fset, []*ast.File{file}, info); err != nil {
		t.Fatal(err)
	}
	codes := map[int]bool{}
	for expr, tv := range info.Types {
		if _, ok := expr.(*ast.SelectorExpr); ok && tv.Value != nil {
			code, _ := constant.Int64Val(tv.Value)
			codes[int(code)] = true
		}
	}
	if len(codes) == 0 {
		t.Fatal("no writeStatus call found")
	}
	return codes
}

// noFlush is a ResponseWriter that cannot stream.
type noFlush struct{ http.ResponseWriter }

// Every code the handler answers with (every writeStatus of its source) is provoked, on each
// operation that can give it, and each answer is one the operation documents.
func TestEveryCodeTheHandlerWritesIsDocumented(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.Contains(r.URL.Path, "/namespaces/garbled/"):
			_, _ = io.WriteString(w, "not a list")
		case strings.Contains(r.URL.Path, "/namespaces/hangup/"):
			conn, _, _ := w.(http.Hijacker).Hijack()
			_ = conn.Close()
		default:
			w.WriteHeader(http.StatusTeapot) // never reached by the requests below
		}
	}))
	defer upstream.Close()
	kinds, err := restapi.KindsFromCRDs(widgetCRDs)
	if err != nil {
		t.Fatal(err)
	}
	h, err := restapi.NewHandler(&rest.Config{Host: upstream.URL}, kinds, restapi.HandlerOptions{MaxBodyBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	doc := restapitest.Document(t, widgetCRDs)
	const collection, item = "/api/v1/namespaces/{namespace}/widgets", "/api/v1/namespaces/{namespace}/widgets/{name}"
	type request struct{ method, path string }
	operations := []request{{"GET", collection}, {"POST", collection}, {"GET", item}, {"PUT", item}, {"PATCH", item}, {"DELETE", item}}
	at := func(path, namespace string) string {
		return strings.NewReplacer("{namespace}", namespace, "{name}", "w").Replace(path)
	}
	large := `{"metadata":{"name":"w"},"spec":{"widget":{"image":"` + strings.Repeat("x", 100) + `"}}}`
	provoked := map[int]bool{}
	check := func(method, path, template, contentType, body string, streams bool, headers ...string) {
		t.Helper()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		rec := httptest.NewRecorder()
		var w http.ResponseWriter = rec
		if !streams {
			w = noFlush{rec}
		}
		h.ServeHTTP(w, req)
		provoked[rec.Code] = true
		if template == "" {
			return
		}
		op := doc.Paths.Find(template).GetOperation(method)
		if op.Responses.Value(strconv.Itoa(rec.Code)) == nil {
			t.Errorf("%s %s answers %d (%s), which %s %s does not document", method, path, rec.Code, strings.TrimSpace(rec.Body.String()), method, template)
		}
	}
	bearer := []string{"Authorization", "Bearer t"}
	for _, op := range operations {
		ct, body := "application/json", `{}`
		if op.method == "PATCH" {
			ct = "application/merge-patch+json"
		}
		check(op.method, at(op.path, "ns"), op.path, ct, body, true)                                                 // no token
		check(op.method, at(op.path, "Not_A_Namespace"), op.path, ct, body, true, bearer...)                         // invalid namespace
		check(op.method, at(op.path, "ns")+"?bogus=1", op.path, ct, body, true, bearer...)                           // unknown parameter
		check(op.method, at(op.path, "hangup"), op.path, ct, body, true, bearer...)                                  // the API server hangs up
		check(op.method, strings.Replace(at(op.path, "ns"), "widgets", "gadgets", 1), "", ct, body, true, bearer...) // no such kind
		if op.method == "POST" || op.method == "PUT" || op.method == "PATCH" {
			check(op.method, at(op.path, "ns"), op.path, ct, large, true, bearer...) // too large
			check(op.method, at(op.path, "ns"), op.path, ct, `[]`, true, bearer...)  // not an object
		}
		if op.method == "PATCH" {
			check(op.method, at(op.path, "ns"), op.path, "text/plain", body, true, bearer...)
		}
		if op.method == "DELETE" || op.method == "POST" {
			check(op.method, at(op.path, "ns")+"?dryRun=Some", op.path, ct, body, true, bearer...)
		}
	}
	check("GET", at(collection, "ns")+"?watch=true", collection, "", "", false, bearer...)     // cannot stream
	check("GET", at(collection, "garbled")+"?watch=true", collection, "", "", true, bearer...) // an unreadable list
	for code := range handlerErrorCodes(t) {
		if !provoked[code] {
			t.Errorf("the handler writes %d, which no request here provokes: add one, and document it", code)
		}
	}
}
