package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
)

// everything in a namespace: what an administrator's token may do there.
var everything = rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}

// A page of a tenant's pod, served through the API server's proxy subresource on the
// console's origin, would run with the console's CSP allowing it and reach the relay with an
// administrator's session. The relay serves no such subresource, however the path is spelled.
func TestTheRelayServesNoSubresourceOfContentTheAPIServerDidNotWrite(t *testing.T) {
	ns := env.NewNamespace(t, "subresources")
	b := newBrowser(t)
	b.login(env.Token(t, ns, "admin", everything))
	pods := proxyPath + "api/v1/namespaces/" + ns + "/pods/"
	for _, path := range []string{
		pods + "web:8080/proxy/",
		pods + "web:8080/proxy/index.html",
		pods + "web/proxy",
		pods + "web/exec?command=sh",
		pods + "web/attach",
		pods + "web/portforward",
		pods + "web/log",
		pods + "web%2Fproxy",             // an encoded slash
		pods + "web%252Fproxy",           // encoded twice
		pods + "web/%70roxy",             // an encoded letter
		pods + "web/status/../proxy",     // a dot segment
		pods + "web/status/%2e%2e/proxy", // an encoded dot segment
		pods + "WEB/PROXY",               // another case
		proxyPath + "api/v1/namespaces/" + ns + "/services/web:80/proxy/",
		proxyPath + "api/v1/namespaces/" + ns + "/services/https:web:443/proxy/",
		proxyPath + "api/v1/nodes/node-1/proxy/metrics",
		proxyPath + "api/v1/proxy/namespaces/" + ns + "/pods/web",
		proxyPath + "api/v1/watch/namespaces/" + ns + "/pods",
		proxyPath + "apis/test.quintet.dev/v1/namespaces/" + ns + "/widgets/w/proxy",
		proxyPath + "openapi/v2",
		proxyPath + "openapi/v3",
		proxyPath + "healthz",
		proxyPath + "metrics",
		proxyPath + "logs/",
	} {
		code, body := b.send(http.MethodGet, path, "", nil)
		if code == http.StatusOK || (code != http.StatusNotFound && code != http.StatusBadRequest) ||
			!strings.Contains(body, "the console") {
			t.Errorf("GET %s: got %d %.200s, want the console's own refusal", path, code, body)
		}
	}
	for _, path := range []string{
		pods + "web/exec?command=sh",
		pods + "web/portforward",
		pods + "web/eviction",
		pods + "web/binding",
		proxyPath + "api/v1/namespaces/" + ns + "/services/web/proxy/",
		proxyPath + "apis/test.quintet.dev/v1/namespaces/" + ns + "/widgets/w/status/proxy",
	} {
		code, body := b.send(http.MethodPost, path, "{}", nil)
		expect(t, "POST "+path, code, body, http.StatusForbidden, "namespaced objects of API groups only")
	}
}

func TestTheRelayAnswersAreDataNeverADocument(t *testing.T) {
	ns := env.NewNamespace(t, "documents")
	b := newBrowser(t)
	b.login(env.Token(t, ns, "reader", widgets, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list"}}))
	for _, accept := range []string{"", "application/json", "application/yaml", "text/html", "application/vnd.kubernetes.protobuf", "*/*"} {
		req, err := http.NewRequest(http.MethodGet, site.URL+proxyPath+"api/v1/namespaces/"+ns+"/configmaps", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", accept)
		resp, err := b.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		h := resp.Header
		if resp.StatusCode != http.StatusOK || !isJSON(h.Get("Content-Type")) {
			t.Errorf("Accept %q: got %d %q, want 200 and JSON", accept, resp.StatusCode, h.Get("Content-Type"))
		}
		if csp := h.Values("Content-Security-Policy"); len(csp) != 1 || !strings.HasPrefix(csp[0], "sandbox;") || !strings.Contains(csp[0], "default-src 'none'") {
			t.Errorf("Accept %q: the answer's Content-Security-Policy %q must be one sandbox allowing nothing", accept, csp)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Content-Disposition") != "attachment" || h.Get("Set-Cookie") != "" {
			t.Errorf("Accept %q: the answer's headers %v must say nosniff and attachment and set no cookie", accept, h)
		}
	}
	for path, want := range map[string]string{
		"version": `"gitVersion"`, "api": `"versions"`, "apis": `"groups"`,
		"apis/test.quintet.dev/v1": `"resources"`, "openapi/v3/apis/test.quintet.dev/v1": `"openapi"`,
		"apis/test.quintet.dev/v1/namespaces/" + ns + "/widgets": `"WidgetList"`,
	} {
		code, body := b.send(http.MethodGet, proxyPath+path, "", nil)
		expect(t, "GET "+path, code, body, http.StatusOK, want)
	}
}

func TestTheRelayTakesNoUpgradeNoMethodOverrideAndNoLargeBody(t *testing.T) {
	ns := env.NewNamespace(t, "requests")
	b := newBrowser(t)
	b.login(env.Token(t, ns, "writer", widgets))
	path := proxyPath + "apis/test.quintet.dev/v1/namespaces/" + ns + "/widgets"
	code, body := b.send(http.MethodPost, path, `{"apiVersion":"test.quintet.dev/v1","kind":"Widget","metadata":{"name":"kept"},"spec":{"size":1}}`, nil)
	expect(t, "a create", code, body, http.StatusCreated, `"name":"kept"`)

	code, body = b.send(http.MethodGet, path+"/kept", "", map[string]string{"Connection": "Upgrade", "Upgrade": "SPDY/3.1"})
	expect(t, "an upgrade", code, body, http.StatusBadRequest, "no upgrade")
	for _, header := range []string{"X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override"} {
		code, body = b.send(http.MethodGet, path+"/kept", "", map[string]string{header: "DELETE"})
		expect(t, "a GET with "+header, code, body, http.StatusOK, `"name":"kept"`)
	}
	code, body = b.send(http.MethodGet, path+"/kept", "", nil)
	expect(t, "the widget after the overrides", code, body, http.StatusOK, `"name":"kept"`)
	code, body = b.send(http.MethodPost, path, `{"metadata":{"name":"big"},"spec":{"pad":"`+strings.Repeat("x", 2<<20)+`"}}`, nil)
	if code != http.StatusRequestEntityTooLarge && code != http.StatusBadGateway && code != http.StatusBadRequest {
		t.Errorf("a body over the limit: got %d %.200s", code, body)
	}
}

func TestTheYAMLConversionNeedsALoginAndRefusesBombs(t *testing.T) {
	anonymous := newBrowser(t)
	code, body := anonymous.send(http.MethodPost, convertPath+"?to=json", "kind: Widget\n", map[string]string{csrfHeader: "chosen"})
	expect(t, "a conversion without a session", code, body, http.StatusForbidden, "CSRF")
	anonymous.client.Jar.SetCookies(mustURL(site.URL), []*http.Cookie{{Name: "__Host-quintet-csrf", Value: "chosen", Path: "/", Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode}})
	code, body = anonymous.send(http.MethodPost, convertPath+"?to=json", "kind: Widget\n", map[string]string{csrfHeader: "chosen"})
	expect(t, "a conversion with a CSRF cookie of the caller's choosing and no login", code, body, http.StatusUnauthorized, "log in")
	anonymous.client.Jar.SetCookies(mustURL(site.URL), []*http.Cookie{{Name: "__Host-quintet-token", Value: "made-up", Path: "/", Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode}})
	code, body = anonymous.send(http.MethodPost, convertPath+"?to=json", "kind: Widget\n", map[string]string{csrfHeader: "chosen"})
	expect(t, "a conversion with a made-up token", code, body, http.StatusUnauthorized, "log in again")

	ns := env.NewNamespace(t, "bombs")
	b := newBrowser(t)
	b.login(env.Token(t, ns, "editor", widgets))
	code, body = b.send(http.MethodPost, convertPath+"?to=json", "kind: Widget\n", map[string]string{"Origin": "", "Sec-Fetch-Site": ""})
	expect(t, "a conversion with neither Origin nor Sec-Fetch-Site", code, body, http.StatusForbidden, "CSRF")
	code, body = b.send(http.MethodPost, convertPath+"?to=json", "kind: Widget\n", map[string]string{"Origin": "", "Sec-Fetch-Site": "same-origin"})
	expect(t, "a conversion from the page, Sec-Fetch-Site alone", code, body, http.StatusOK, `{"kind":"Widget"}`)

	// A billion laughs: nine levels of nine aliases.
	bomb := "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
	for i, prev := 'b', 'a'; i <= 'i'; i, prev = i+1, i {
		bomb += string(i) + ": &" + string(i) + " [" + strings.TrimSuffix(strings.Repeat("*"+string(prev)+",", 9), ",") + "]\n"
	}
	start := time.Now()
	code, body = b.send(http.MethodPost, convertPath+"?to=json", bomb, nil)
	expect(t, "a YAML bomb", code, body, http.StatusUnprocessableEntity, "not valid YAML")
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("a YAML bomb took %s to refuse", elapsed)
	}
}

// FuzzReadable: whatever path the page asks for, the console reads only paths of segments
// Kubernetes allows, no deeper than an object's subresource, and the only subresources are
// status and scale: any other last segment of a readable path is a name, which stays
// readable as any other name.
func FuzzReadable(f *testing.F) {
	for _, seed := range []string{"/api/v1/namespaces/a/pods/b/proxy", "/api/v1/namespaces/a/pods", "/apis/g.io/v1/x/y/status",
		"/openapi/v3/apis/g/v1", "/version", "/api/v1/namespaces/a/pods/b:80/proxy/", "/api/v1/nodes/n/proxy", "/apis/g/v1/namespaces/n/r/x/scale",
		"/api/v1/namespaces/a/pods/log", "/api/v1/namespaces/a/pods/b/log"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, path string) {
		if !readable(path) {
			return
		}
		parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
		for _, p := range parts {
			if !segment.MatchString(p) {
				t.Fatalf("%q is readable with the segment %q", path, p)
			}
		}
		if len(parts) > 8 {
			t.Fatalf("%q is readable with %d segments", path, len(parts))
		}
		last := parts[len(parts)-1]
		if last == "status" || last == "scale" || parts[0] == "openapi" || len(parts) <= 2 {
			return
		}
		if renamed := strings.Join(append(parts[:len(parts)-1:len(parts)-1], "x"), "/"); !readable("/" + renamed) {
			t.Fatalf("%q is readable with %q as a subresource", path, last)
		}
	})
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}
