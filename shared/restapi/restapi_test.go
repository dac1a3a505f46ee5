package restapi

import (
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/quintet-operators/quintet/shared/internal/testkind"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// widgetCRDs are the CRDs of shared/'s own test kind, Widget.
var widgetCRDs = testkind.CRDs

var (
	env *testenv.Env
	// api serves the Widget kind against env's API server, over plain HTTP (TLS: server_test.go).
	api *httptest.Server
)

func TestMain(m *testing.M) {
	flag.Parse()
	if worker := flag.Lookup("test.fuzzworker"); worker != nil && worker.Value.String() == "true" {
		os.Exit(m.Run()) // a fuzzing worker runs FuzzDecodeBody only: no API server
	}
	var err error
	if env, err = testenv.Start(testenv.Options{CRDDirectoryPaths: []string{testkind.CRDDir}}); err != nil {
		panic(err)
	}
	kinds, err := KindsFromCRDs(widgetCRDs)
	if err != nil {
		panic(err)
	}
	h, err := NewHandler(env.Config, kinds, HandlerOptions{Title: "widget", MaxBodyBytes: 64 << 10})
	if err != nil {
		panic(err)
	}
	api = httptest.NewServer(h)
	code := m.Run()
	api.Close()
	if err := env.Stop(); err != nil {
		panic(err)
	}
	os.Exit(code)
}

func widgetRules(verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{"test.quintet.dev"}, Resources: []string{"widgets"}, Verbs: verbs}
}

// answer is one response of the API, its body decoded.
type answer struct {
	code int
	body map[string]any
	raw  string
}

// do sends a request to the API with token (none if empty) and extra headers.
func do(t *testing.T, method, path, token, contentType, body string, headers ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, api.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := answer{code: resp.StatusCode, raw: string(raw)}
	_ = json.Unmarshal(raw, &a.body)
	return a
}

func (a answer) expect(t *testing.T, code int) answer {
	t.Helper()
	if a.code != code {
		t.Fatalf("got %d, want %d: %s", a.code, code, a.raw)
	}
	return a
}

// field reads a nested field of the body, e.g. field("spec", "widget", "replicas").
func (a answer) field(path ...string) any {
	var v any = a.body
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func widgetsPath(namespace string) string { return "/api/v1/namespaces/" + namespace + "/widgets" }

func TestEveryVerbOnWidgets(t *testing.T) {
	ns := env.NewNamespace(t, "verbs")
	token := env.Token(t, ns, "editor", widgetRules("get", "list", "watch", "create", "update", "patch", "delete"))
	collection, item := widgetsPath(ns), widgetsPath(ns)+"/web"

	created := do(t, "POST", collection, token, "application/json",
		`{"metadata":{"name":"web","labels":{"tier":"front"}},"spec":{"widget":{"replicas":2}}}`).expect(t, http.StatusCreated)
	if created.field("apiVersion") != "test.quintet.dev/v1" || created.field("kind") != "Widget" {
		t.Fatalf("apiVersion and kind are filled in: %s", created.raw)
	}
	do(t, "GET", item, token, "", "").expect(t, http.StatusOK)

	list := do(t, "GET", collection+"?labelSelector=tier%3Dfront&limit=1", token, "", "").expect(t, http.StatusOK)
	if items, _ := list.field("items").([]any); len(items) != 1 {
		t.Fatalf("the labelled Widget is listed: %s", list.raw)
	}
	if other := do(t, "GET", collection+"?labelSelector=tier%3Dback", token, "", "").expect(t, http.StatusOK); len(other.field("items").([]any)) != 0 {
		t.Fatalf("labelSelector reaches the API server: %s", other.raw)
	}

	replaced := created.body
	replaced["spec"] = map[string]any{"widget": map[string]any{"replicas": 3}}
	body, _ := json.Marshal(replaced)
	do(t, "PUT", item, token, "application/json", string(body)).expect(t, http.StatusOK)
	do(t, "PUT", item, token, "application/json", string(body)).expect(t, http.StatusConflict) // a stale resourceVersion

	merged := do(t, "PATCH", item, token, mergePatch, `{"spec":{"widget":{"replicas":4}}}`).expect(t, http.StatusOK)
	if merged.field("spec", "widget", "replicas") != 4.0 {
		t.Fatalf("merge patch: %s", merged.raw)
	}
	applied := do(t, "PATCH", item+"?fieldManager=portal&force=true", token, applyPatch,
		"apiVersion: test.quintet.dev/v1\nkind: Widget\nmetadata:\n  name: web\nspec:\n  widget:\n    replicas: 5\n").expect(t, http.StatusOK)
	if applied.field("spec", "widget", "replicas") != 5.0 {
		t.Fatalf("server-side apply: %s", applied.raw)
	}
	managers, _ := applied.field("metadata", "managedFields").([]any)
	if !strings.Contains(applied.raw, `"manager":"portal"`) || len(managers) == 0 {
		t.Fatalf("the apply's field manager is the caller's: %s", applied.raw)
	}

	do(t, "POST", collection+"?dryRun=All", token, "application/json", `{"metadata":{"name":"dry"},"spec":{"widget":{"replicas":1}}}`).expect(t, http.StatusCreated)
	do(t, "GET", collection+"/dry", token, "", "").expect(t, http.StatusNotFound)
	do(t, "DELETE", item+"?dryRun=All", token, "", "").expect(t, http.StatusOK)
	do(t, "GET", item, token, "", "").expect(t, http.StatusOK)

	do(t, "DELETE", item, token, "", "").expect(t, http.StatusOK)
	do(t, "GET", item, token, "", "").expect(t, http.StatusNotFound)
}

func TestTheCallersTokenDecides(t *testing.T) {
	ns, other := env.NewNamespace(t, "reader"), env.NewNamespace(t, "elsewhere")
	reader := env.Token(t, ns, "reader", widgetRules("get", "list"))

	noToken := do(t, "GET", widgetsPath(ns), "", "", "").expect(t, http.StatusUnauthorized)
	if !strings.Contains(noToken.raw, "bearer token is required") {
		t.Fatalf("a request without a token is told what it lacks: %s", noToken.raw)
	}
	do(t, "GET", widgetsPath(ns), "not-a-token", "", "").expect(t, http.StatusUnauthorized)

	do(t, "GET", widgetsPath(ns), reader, "", "").expect(t, http.StatusOK)
	refused := do(t, "POST", widgetsPath(ns), reader, "application/json", `{"metadata":{"name":"x"}}`).expect(t, http.StatusForbidden)
	if msg, _ := refused.field("message").(string); !strings.Contains(msg, "cannot create resource \"widgets\"") {
		t.Fatalf("403 carries the API server's message: %s", refused.raw)
	}
	do(t, "GET", widgetsPath(other), reader, "", "").expect(t, http.StatusForbidden)

	// Impersonation headers never reach the API server: the manager's own account could
	// not impersonate anyway, and the caller's token must not gain rights through them.
	for _, headers := range [][]string{
		{"Impersonate-User", "system:admin"},
		{"Impersonate-Group", "system:masters", "Impersonate-User", "admin"},
		{"Impersonate-Uid", "0", "Impersonate-Extra-Scopes", "all"},
	} {
		do(t, "POST", widgetsPath(ns), reader, "application/json", `{"metadata":{"name":"x"}}`, headers...).expect(t, http.StatusForbidden)
		do(t, "GET", widgetsPath(other), reader, "", "", headers...).expect(t, http.StatusForbidden)
	}
}

func TestInvalidBodiesNameTheirFields(t *testing.T) {
	ns := env.NewNamespace(t, "invalid")
	token := env.Token(t, ns, "editor", widgetRules("create"))
	for _, tc := range []struct{ spec, field string }{
		{`{"widget":{"replicas":-1}}`, "spec.widget.replicas"},
		{`{"widget":{"replicas":1001}}`, "spec.widget.replicas"},
		{`{"widget":{"image":"nginx latest"}}`, "spec.widget.image"},
		{`{"widget":{"imagePullPolicy":"Sometimes"}}`, "spec.widget.imagePullPolicy"},
		{`{"widget":{"rollingUpdate":{"maxSurge":"150%"}}}`, "spec.widget.rollingUpdate.maxSurge"},
		{`{"widget":{"rollingUpdate":{"maxSurge":0,"maxUnavailable":0}}}`, "spec.widget.rollingUpdate"},
	} {
		got := do(t, "POST", widgetsPath(ns), token, "application/json", `{"metadata":{"name":"bad"},"spec":`+tc.spec+`}`).
			expect(t, http.StatusUnprocessableEntity)
		causes, _ := got.field("details", "causes").([]any)
		fields := make([]string, 0, len(causes))
		for _, c := range causes {
			fields = append(fields, c.(map[string]any)["field"].(string))
		}
		if !slices.Contains(fields, tc.field) {
			t.Errorf("%s: causes name %v, want %s: %s", tc.spec, fields, tc.field, got.raw)
		}
	}
	unknown := do(t, "POST", widgetsPath(ns), token, "application/json", `{"metadata":{"name":"bad"},"spec":{"widget":{"replicas":1,"colour":"red"}}}`)
	if unknown.code != http.StatusBadRequest || !strings.Contains(unknown.raw, `unknown field \"spec.widget.colour\"`) {
		t.Errorf("strict field validation refuses an unknown field: %d %s", unknown.code, unknown.raw)
	}
}

func TestMalformedRequestsAreRefusedClearly(t *testing.T) {
	ns := env.NewNamespace(t, "malformed")
	token := env.Token(t, ns, "editor", widgetRules("create", "patch", "get"))
	for _, tc := range []struct {
		method, path, contentType, body string
		code                            int
		says                            string
	}{
		{"POST", widgetsPath(ns), "application/json", `{"metadata":`, http.StatusBadRequest, "not a JSON object"},
		{"POST", widgetsPath(ns), "application/json", `[1,2]`, http.StatusBadRequest, "not a JSON object"},
		{"POST", widgetsPath(ns), "application/json", `{"kind":"Pod"}`, http.StatusBadRequest, `kind is "Pod"`},
		{"POST", widgetsPath(ns), "application/json", `{"metadata":{"namespace":"kube-system"}}`, http.StatusBadRequest, "the path says"},
		{"POST", widgetsPath(ns), "application/json", `{"metadata":{"name":"big"},"x":"` + strings.Repeat("a", 70<<10) + `"}`,
			http.StatusRequestEntityTooLarge, "larger than"},
		{"POST", widgetsPath(ns) + "?dryRun=Some", "application/json", `{}`, http.StatusBadRequest, `"All"`},
		{"POST", widgetsPath(ns) + "?fieldValidation=Ignore", "application/json", `{}`, http.StatusBadRequest, "unknown query parameters [fieldValidation]"},
		{"PATCH", widgetsPath(ns) + "/x", "application/json-patch+json", `[]`, http.StatusUnsupportedMediaType, "merge patch"},
		{"GET", widgetsPath("Bad_NS"), "", "", http.StatusBadRequest, "invalid namespace"},
		{"GET", "/api/v1/namespaces/" + ns + "/pods", "", "", http.StatusNotFound, `serves no "pods"`},
	} {
		got := do(t, tc.method, tc.path, token, tc.contentType, tc.body)
		if msg, _ := got.field("message").(string); got.code != tc.code || !strings.Contains(msg, tc.says) {
			t.Errorf("%s %s %.40s: got %d %s, want %d saying %q", tc.method, tc.path, tc.body, got.code, got.raw, tc.code, tc.says)
		}
		if got.field("kind") != "Status" {
			t.Errorf("%s %s: the answer is a Status: %s", tc.method, tc.path, got.raw)
		}
	}
}

func TestDocumentAndSwaggerUIAreServed(t *testing.T) {
	doc := do(t, "GET", "/api/v1/openapi.json", "", "", "").expect(t, http.StatusOK)
	if doc.field("paths", "/api/v1/namespaces/{namespace}/widgets/{name}") == nil {
		t.Fatalf("the document has the Widget paths: %.300s", doc.raw)
	}
	page := do(t, "GET", "/api/v1/docs/", "", "", "").expect(t, http.StatusOK)
	if !strings.Contains(page.raw, "swagger-ui") || !strings.Contains(page.raw, "/api/v1/openapi.json") {
		t.Fatalf("the docs page is Swagger UI on the document: %.300s", page.raw)
	}
	resp, err := http.Get(api.URL + "/api/v1/docs/swagger-ui-bundle.js")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("Swagger UI's script is served from the binary: %d", resp.StatusCode)
	}
}

// Swagger UI shares the API's origin: the page runs only its own scripts and keeps no token
// in storage, and no answer of the API is a document a browser would show or run.
func TestSwaggerUIRunsOnlyItsOwnScriptsAndTheAPIServesData(t *testing.T) {
	resp, err := http.Get(api.URL + "/api/v1/docs/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	scripts, _, _ := strings.Cut(strings.SplitAfter(csp, "script-src")[1], ";")
	if !strings.Contains(scripts, "'sha256-") || strings.Contains(scripts, "unsafe") || !strings.Contains(csp, "frame-ancestors 'none'") ||
		strings.Contains(csp, "http") || resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("the docs page's policy must allow its own scripts by hash only and no framing: %q", csp)
	}
	if strings.Contains(string(page), "persistAuthorization") {
		t.Error("Swagger UI must not keep the token in local storage (persistAuthorization)")
	}
	for _, path := range []string{"/api/v1/openapi.json", "/api/v1/namespaces/default/widgets", "/api/v1/nowhere"} {
		resp, err := http.Get(api.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "sandbox;") || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: the answer must be sandboxed data (nosniff): %v", path, resp.Header)
		}
	}
	// Swagger UI's handler can relay a request to any URL (?proxy=); it must stay off.
	proxied := do(t, "GET", "/api/v1/docs/?proxy="+url.QueryEscape(env.Config.Host+"/version"), "", "", "").expect(t, http.StatusOK)
	if strings.Contains(proxied.raw, "gitVersion") || !strings.Contains(proxied.raw, "swagger-ui") {
		t.Fatalf("the docs page relayed a request: %.300s", proxied.raw)
	}
}
