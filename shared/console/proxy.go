package console

import (
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"regexp"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

const (
	// proxyPath relays the page's Kubernetes API requests: /console/k8s/apis/... goes to
	// /apis/... of the API server.
	proxyPath   = Path + "k8s/"
	convertPath = Path + "convert"
	// requestTimeout bounds the console's own requests to the API server.
	requestTimeout = 30 * time.Second
)

// Paths the page may read (discovery, the OpenAPI documents, objects, Events) and change: a
// namespaced object of an API group (the custom resources; the caller's RBAC decides which),
// or a review of the caller's own access.
var (
	readablePath = regexp.MustCompile(`^/(api|apis|openapi/v3)(/|$)|^/version$`)
	writablePath = regexp.MustCompile(`^/apis/[a-z0-9.-]+/[a-z0-9]+/(namespaces/[a-z0-9-]+/[a-z0-9.-]+(/[a-z0-9.-]+)?|selfsubject(access|rules)reviews)$`)
)

// relayedHeaders are the only headers of the page's that reach the API server.
var relayedHeaders = []string{"Accept", "Content-Type"}

// proxy relays a request under proxyPath to the API server with the session's token.
func (h *Handler) proxy() http.Handler {
	relay := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			out := pr.Out
			out.URL.Scheme, out.URL.Host = h.upstream.Scheme, h.upstream.Host
			out.URL.Path = strings.TrimSuffix(h.upstream.Path, "/") + apiPath(pr.In)
			out.URL.RawPath = ""
			out.Host = ""
			kept := http.Header{}
			for _, name := range relayedHeaders {
				if v := pr.In.Header.Values(name); len(v) > 0 {
					kept[name] = v
				}
			}
			kept.Set("Authorization", "Bearer "+callerToken(pr.In))
			out.Header = kept
		},
		Transport:     h.transport,
		FlushInterval: -1, // watches stream
		ModifyResponse: func(resp *http.Response) error {
			resp.Header.Del("Set-Cookie")
			resp.Header.Set("Cache-Control", "no-store")
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if errors.Is(err, r.Context().Err()) {
				return // the page went away
			}
			h.opts.Log.Error(err, "The API server did not answer", "method", r.Method, "path", r.URL.Path)
			writeStatus(w, http.StatusBadGateway, "ServiceUnavailable", "the Kubernetes API server did not answer: "+err.Error())
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := apiPath(r)
		if strings.Contains(path, "..") || strings.Contains(path, "//") {
			writeStatus(w, http.StatusBadRequest, "BadRequest", "a malformed path")
			return
		}
		if callerToken(r) == "" {
			writeStatus(w, http.StatusUnauthorized, "Unauthorized", "log in with a bearer token")
			return
		}
		if r.Method == http.MethodGet {
			if !readablePath.MatchString(path) {
				writeStatus(w, http.StatusNotFound, "NotFound", "the console reads only /api, /apis, /openapi/v3 and /version")
				return
			}
		} else { // POST, PUT, PATCH or DELETE: the routes relay no other method
			if !checkCSRF(w, r) {
				return
			}
			if !writablePath.MatchString(path) {
				writeStatus(w, http.StatusForbidden, "Forbidden", "the console changes namespaced objects of API groups only")
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes)
		}
		relay.ServeHTTP(w, r)
	})
}

// apiPath is the Kubernetes API path a request under proxyPath names: /apis/... for
// /console/k8s/apis/...
func apiPath(r *http.Request) string {
	return strings.TrimPrefix(r.URL.Path, strings.TrimSuffix(proxyPath, "/"))
}

// convert turns the page's YAML into JSON (?to=json) or its JSON into YAML (?to=yaml), for the
// editor's YAML tab. It reads and changes nothing else.
func (h *Handler) convert(w http.ResponseWriter, r *http.Request) {
	if !checkCSRF(w, r) {
		return
	}
	in, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	if err != nil {
		writeStatus(w, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", err.Error())
		return
	}
	var out []byte
	contentType := jsonType
	switch r.URL.Query().Get("to") {
	case "json":
		out, err = yaml.YAMLToJSONStrict(in)
	case "yaml":
		out, err = yaml.JSONToYAML(in)
		contentType = "application/yaml"
	default:
		writeStatus(w, http.StatusBadRequest, "BadRequest", "to=json or to=yaml")
		return
	}
	if err != nil {
		writeStatus(w, http.StatusUnprocessableEntity, "Invalid", "not valid YAML: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", contentType)
	_, _ = w.Write(out)
}
