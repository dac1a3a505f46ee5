package console

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quintet-operators/quintet/shared/internal/testkind"
	"github.com/quintet-operators/quintet/shared/testenv"
)

var (
	env *testenv.Env
	// site serves the console over HTTPS against env's API server.
	site *httptest.Server
)

func TestMain(m *testing.M) {
	flag.Parse()
	if worker := flag.Lookup("test.fuzzworker"); worker != nil && worker.Value.String() == "true" {
		os.Exit(m.Run()) // a fuzzing worker runs FuzzReadable only: no API server
	}
	os.Exit(testenv.MainEnv(m, testenv.Options{CRDDirectoryPaths: []string{testkind.CRDDir}}, func(e *testenv.Env) {
		env = e
		h, err := New(e.Config, Options{})
		if err != nil {
			panic(err)
		}
		site = httptest.NewTLSServer(h)
	}))
}

var widgets = rbacv1.PolicyRule{APIGroups: []string{"test.quintet.dev"}, Resources: []string{"widgets"},
	Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}

// browser is a person's browser on the console: its cookies, and the headers a page of the
// console's own origin sends.
type browser struct {
	t      *testing.T
	client *http.Client
}

func newBrowser(t *testing.T) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := site.Client()
	c.Jar = jar
	return &browser{t: t, client: c}
}

// send makes a request from the console's page; a change carries the CSRF cookie's value
// unless headers say otherwise.
func (b *browser) send(method, path, body string, headers map[string]string) (int, string) {
	b.t.Helper()
	req, err := http.NewRequest(method, site.URL+path, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Origin", site.URL)
	req.Header.Set("Content-Type", jsonType)
	if csrf := b.cookie("__Host-quintet-csrf"); csrf != nil && method != http.MethodGet {
		req.Header.Set(csrfHeader, csrf.Value)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	for {
		resp, err := b.client.Do(req)
		if err != nil {
			b.t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		// A kind's storage answers 429 while it starts, as a client is told to wait and retry.
		if resp.StatusCode != http.StatusTooManyRequests || body != "" {
			return resp.StatusCode, string(data)
		}
		time.Sleep(time.Second)
	}
}

func (b *browser) cookie(name string) *http.Cookie {
	u, _ := url.Parse(site.URL)
	for _, c := range b.client.Jar.Cookies(u) {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func (b *browser) login(token string) (int, string) {
	b.t.Helper()
	body, _ := json.Marshal(map[string]string{"token": token})
	return b.send(http.MethodPost, sessionPath, string(body), nil)
}

func expect(t *testing.T, what string, code int, body string, want int, wantIn string) {
	t.Helper()
	if code != want || !strings.Contains(body, wantIn) {
		t.Fatalf("%s: got %d %s, want %d with %q", what, code, body, want, wantIn)
	}
}

func TestLoginAsksTheAPIServerWhoTheTokenIs(t *testing.T) {
	ns := env.NewNamespace(t, "login")
	token := env.Token(t, ns, "reader", widgets)
	b := newBrowser(t)

	code, body := b.send(http.MethodGet, sessionPath, "", nil)
	expect(t, "the session before logging in", code, body, http.StatusUnauthorized, "log in")
	code, body = b.login("not-a-token")
	expect(t, "a token the API server does not accept", code, body, http.StatusUnauthorized, "does not accept this token")
	code, body = b.login("two words")
	expect(t, "a token with a space", code, body, http.StatusBadRequest, "spaces")

	code, body = b.login(token)
	expect(t, "a ServiceAccount's token", code, body, http.StatusOK, "system:serviceaccount:"+ns+":reader")
	req, err := http.NewRequest(http.MethodPost, site.URL+sessionPath, strings.NewReader(`{"token":"`+token+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", jsonType)
	req.Header.Set("Origin", site.URL)
	resp, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	cookies := map[string]*http.Cookie{}
	for _, c := range resp.Cookies() {
		cookies[c.Name] = c
	}
	tokenCookie, csrf := cookies["__Host-quintet-token"], cookies["__Host-quintet-csrf"]
	if tokenCookie == nil || !tokenCookie.HttpOnly || !tokenCookie.Secure || tokenCookie.SameSite != http.SameSiteStrictMode || tokenCookie.Path != "/" {
		t.Fatalf("the token's cookie must be __Host-, HttpOnly, Secure, SameSite=Strict, Path=/: %+v", tokenCookie)
	}
	if csrf == nil || csrf.HttpOnly || !csrf.Secure || csrf.SameSite != http.SameSiteStrictMode || len(csrf.Value) < 40 {
		t.Fatalf("the CSRF cookie must be readable by the page, Secure, SameSite=Strict and random: %+v", csrf)
	}

	code, body = b.send(http.MethodGet, sessionPath, "", nil)
	expect(t, "the session after logging in", code, body, http.StatusOK, "system:serviceaccount:"+ns+":reader")
	code, body = b.send(http.MethodDelete, sessionPath, "", nil)
	expect(t, "logging out", code, body, http.StatusNoContent, "")
	code, body = b.send(http.MethodGet, sessionPath, "", nil)
	expect(t, "the session after logging out", code, body, http.StatusUnauthorized, "log in")
}

func TestATokenThatStopsWorkingAsksForALoginAgain(t *testing.T) {
	ns := env.NewNamespace(t, "expired")
	token := env.Token(t, ns, "short-lived", widgets)
	b := newBrowser(t)
	code, body := b.login(token)
	expect(t, "logging in", code, body, http.StatusOK, "short-lived")
	// A bound token stops working when its ServiceAccount goes, as one does when it expires.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "short-lived"}}
	if err := env.Client.Delete(context.Background(), sa); err != nil {
		t.Fatal(err)
	}
	// The API server keeps an accepted token's review for up to 10 s.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
		if code, body = b.send(http.MethodGet, sessionPath, "", nil); code != http.StatusOK || time.Now().After(deadline) {
			break
		}
	}
	expect(t, "the session of a revoked token", code, body, http.StatusUnauthorized, "log in again")
	code, body = b.send(http.MethodGet, proxyPath+"apis/test.quintet.dev/v1/namespaces/"+ns+"/widgets", "", nil)
	expect(t, "a list with a revoked token", code, body, http.StatusUnauthorized, "Unauthorized")
}

func TestTheConsoleActsWithTheCallersTokenOnly(t *testing.T) {
	ns, other := env.NewNamespace(t, "mine"), env.NewNamespace(t, "theirs")
	b := newBrowser(t)
	code, body := b.send(http.MethodGet, proxyPath+"apis/test.quintet.dev/v1/namespaces/"+ns+"/widgets", "", nil)
	expect(t, "a list without logging in", code, body, http.StatusUnauthorized, "log in")

	b.login(env.Token(t, ns, "portal", widgets))
	code, body = b.send(http.MethodGet, proxyPath+"apis/test.quintet.dev/v1/namespaces/"+ns+"/widgets", "", nil)
	expect(t, "a list in the token's namespace", code, body, http.StatusOK, `"kind":"WidgetList"`)
	code, body = b.send(http.MethodGet, proxyPath+"apis/test.quintet.dev/v1/namespaces/"+other+"/widgets", "", nil)
	expect(t, "a list in a namespace the token may not read", code, body, http.StatusForbidden,
		`cannot list resource \"widgets\" in API group \"test.quintet.dev\" in the namespace \"`+other+`\"`)
	code, body = b.send(http.MethodGet, proxyPath+"apis/test.quintet.dev/v1/widgets", "", nil)
	expect(t, "a list in all namespaces", code, body, http.StatusForbidden, "at the cluster scope")

	review := `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`
	code, body = b.send(http.MethodPost, proxyPath+"apis/authentication.k8s.io/v1/selfsubjectreviews", review,
		map[string]string{"Impersonate-User": "system:admin", "Authorization": "Bearer someone-else"})
	expect(t, "a review with the caller's own headers", code, body, http.StatusForbidden, "namespaced objects")
	code, body = b.send(http.MethodPost, proxyPath+"apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
		`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"verb":"list","resource":"secrets","namespace":"`+ns+`"}}}`,
		map[string]string{"Impersonate-User": "system:admin", "Authorization": "Bearer someone-else"})
	expect(t, "an access review: the caller's Impersonate-User and Authorization are dropped", code, body, http.StatusCreated, `"allowed":false`)
}

func TestEveryChangeNeedsTheCSRFTokenFromTheConsolesOrigin(t *testing.T) {
	ns := env.NewNamespace(t, "csrf")
	b := newBrowser(t)
	b.login(env.Token(t, ns, "writer", widgets))
	path := proxyPath + "apis/test.quintet.dev/v1/namespaces/" + ns + "/widgets"
	widget := func(name string) string {
		return `{"apiVersion":"test.quintet.dev/v1","kind":"Widget","metadata":{"name":"` + name + `"},"spec":{"size":1}}`
	}
	for what, headers := range map[string]map[string]string{
		"no CSRF header":       {csrfHeader: ""},
		"a wrong CSRF header":  {csrfHeader: "guessed"},
		"another site's page":  {"Origin": "https://evil.example"},
		"another site's frame": {"Origin": "", "Sec-Fetch-Site": "cross-site"},
	} {
		code, body := b.send(http.MethodPost, path, widget("refused"), headers)
		expect(t, "a create with "+what, code, body, http.StatusForbidden, "CSRF")
	}
	code, body := b.send(http.MethodPost, path, widget("made"), nil)
	expect(t, "a create from the console's page", code, body, http.StatusCreated, `"name":"made"`)
	code, body = b.send(http.MethodDelete, path+"/made", "", map[string]string{csrfHeader: ""})
	expect(t, "a delete without the CSRF header", code, body, http.StatusForbidden, "CSRF")
	code, body = b.send(http.MethodPost, proxyPath+"api/v1/namespaces/"+ns+"/secrets", `{"metadata":{"name":"x"}}`, nil)
	expect(t, "a change outside the API groups' namespaced objects", code, body, http.StatusForbidden, "namespaced objects of API groups only")
	code, body = b.send(http.MethodGet, proxyPath+"healthz", "", nil)
	expect(t, "a path the page does not read", code, body, http.StatusNotFound, "reads only")
}

func TestThePageIsServedWholeWithAPolicyThatAllowsItsOwnOriginOnly(t *testing.T) {
	b := newBrowser(t)
	for path, want := range map[string]string{Path: `<script type="module" src="app.js">`, Path + "app.js": "import * as api", Path + "style.css": ":root"} {
		req, _ := http.NewRequest(http.MethodGet, site.URL+path, nil)
		resp, err := b.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		expect(t, path, resp.StatusCode, string(data), http.StatusOK, want)
		csp := resp.Header.Get("Content-Security-Policy")
		for _, directive := range []string{"default-src 'self'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, directive) {
				t.Errorf("%s: the Content-Security-Policy %q lacks %q", path, csp, directive)
			}
		}
		if strings.Contains(csp, "unsafe") || strings.Contains(csp, "http") {
			t.Errorf("%s: the Content-Security-Policy %q allows more than the console's origin", path, csp)
		}
	}
}

func TestTheYAMLTabsConversions(t *testing.T) {
	b := newBrowser(t)
	ns := env.NewNamespace(t, "yaml")
	b.login(env.Token(t, ns, "editor", widgets))
	code, body := b.send(http.MethodPost, convertPath+"?to=json", "kind: Widget\nspec:\n  size: 3\n", map[string]string{"Content-Type": "application/yaml"})
	expect(t, "YAML to JSON", code, body, http.StatusOK, `{"kind":"Widget","spec":{"size":3}}`)
	code, body = b.send(http.MethodPost, convertPath+"?to=yaml", `{"kind":"Widget","spec":{"size":3}}`, nil)
	expect(t, "JSON to YAML", code, body, http.StatusOK, "kind: Widget\nspec:\n  size: 3\n")
	code, body = b.send(http.MethodPost, convertPath+"?to=json", "spec:\n  size: 3\n  size: 4\n", nil)
	expect(t, "YAML with a key twice", code, body, http.StatusUnprocessableEntity, "not valid YAML")
	code, body = b.send(http.MethodPost, convertPath+"?to=json", "kind: Widget\n", map[string]string{csrfHeader: ""})
	expect(t, "a conversion without the CSRF header", code, body, http.StatusForbidden, "CSRF")
}
