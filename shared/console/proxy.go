package console

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httputil"
	"regexp"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// errNotJSON is an answer of the API server's the console does not relay.
var errNotJSON = errors.New("an answer that is not JSON")

const (
	// proxyPath relays the page's Kubernetes API requests: /console/k8s/apis/... goes to
	// /apis/... of the API server.
	proxyPath   = Path + "k8s/"
	convertPath = Path + "convert"
	// requestTimeout bounds the console's own requests to the API server.
	requestTimeout = 30 * time.Second
)

// The page may read discovery, the OpenAPI documents and objects (readable), and change a
// namespaced object of an API group (the custom resources; the caller's RBAC decides which) or
// review its own access (writablePath). Nothing else is relayed: above all no subresource
// whose answer the API server does not produce itself as JSON (a pod's or service's proxy,
// exec, attach, portforward, log), which would put content someone else wrote on the
// console's origin.
var writablePath = regexp.MustCompile(`^/apis/[a-z0-9.-]+/[a-z0-9]+/(namespaces/[a-z0-9-]+/[a-z0-9.-]+(/[a-z0-9.-]+)?|selfsubject(access|rules)reviews)$`)

// segment is one part of a path the console reads: a group, version, resource, namespace or
// name, in the characters Kubernetes allows them (no ':', '%', '/' or '.' alone).
var segment = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$`)

// readableSubresources are the only subresources the page may read: the API server's own
// JSON of the object.
var readableSubresources = []string{"status", "scale"}

// readable says whether the page may read path: /version, /api, /apis, the OpenAPI v3
// document of a group version, and under /api/v1 or /apis/<group>[/<version>] a collection, an object or a
// readable subresource of one, cluster-wide or in a namespace.
func readable(path string) bool {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if slices.ContainsFunc(parts, func(p string) bool { return !segment.MatchString(p) }) {
		return false
	}
	switch parts[0] {
	case "version":
		return len(parts) == 1
	case "api": // /api, /api/v1[/...]
		return len(parts) == 1 || parts[1] == "v1" && readableResource(parts[2:])
	case "apis": // /apis, /apis/<group>, /apis/<group>/<version>[/...]
		return len(parts) <= 2 || readableResource(parts[3:])
	case "openapi": // /openapi/v3/api/v1, /openapi/v3/apis/<group>/<version>
		return len(parts) >= 4 && parts[1] == "v3" &&
			(len(parts) == 4 && parts[2] == "api" && parts[3] == "v1" || len(parts) == 5 && parts[2] == "apis")
	}
	return false
}

// readableResource says whether the page may read the resource path after a group version:
// nothing (its discovery), [namespaces/<namespace>/]<resource>[/<name>[/<subresource>]].
func readableResource(parts []string) bool {
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	switch len(parts) {
	case 0, 1, 2:
		return true
	case 3:
		return slices.Contains(readableSubresources, parts[2])
	}
	return false
}

// relayedHeaders are the only headers of the page's that reach the API server.
var relayedHeaders = []string{"Accept", "Content-Type"}

// relayedResponseHeaders go on every relayed answer: it is data for the page's scripts, never
// a document a browser shows or runs, whatever it holds.
var relayedResponseHeaders = map[string]string{
	"Content-Security-Policy": "sandbox; default-src 'none'; frame-ancestors 'none'",
	"Content-Disposition":     "attachment",
	"X-Content-Type-Options":  "nosniff",
	"Cache-Control":           "no-store",
}

// isJSON says whether a Content-Type or each of an Accept header's media ranges is JSON
// (parameters such as as=Table or stream=watch aside).
func isJSON(header string) bool {
	for mediaRange := range strings.SplitSeq(header, ",") {
		if t, _, err := mime.ParseMediaType(mediaRange); err != nil || t != jsonType {
			return false
		}
	}
	return true
}

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
			if !isJSON(kept.Get("Accept")) {
				kept.Set("Accept", jsonType) // never YAML, protobuf or anything else
			}
			kept.Set("Authorization", "Bearer "+callerToken(pr.In))
			out.Header = kept
		},
		Transport:     h.transport,
		FlushInterval: -1, // watches stream
		ModifyResponse: func(resp *http.Response) error {
			if ct := resp.Header.Get("Content-Type"); ct != "" && !isJSON(ct) {
				return fmt.Errorf("%w: %s", errNotJSON, ct)
			}
			resp.Header.Del("Set-Cookie")
			for k := range relayedResponseHeaders {
				resp.Header.Del(k) // the relay's own, set on the answer, are the only ones
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if errors.Is(err, r.Context().Err()) {
				return // the page went away
			}
			if errors.Is(err, errNotJSON) {
				writeStatus(w, http.StatusBadGateway, "InternalError", "the console relays only JSON from the API server, not "+err.Error())
				return
			}
			h.opts.Log.Error(err, "The API server did not answer", "method", r.Method, "path", r.URL.Path)
			writeStatus(w, http.StatusBadGateway, "ServiceUnavailable", "the Kubernetes API server did not answer: "+err.Error())
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := apiPath(r)
		if strings.Contains(path, "..") || strings.Contains(path, "//") {
			writeStatus(w, http.StatusBadRequest, "BadRequest", "the console relays no path with .. or //")
			return
		}
		if r.Header.Get("Upgrade") != "" {
			writeStatus(w, http.StatusBadRequest, "BadRequest", "the console relays no upgrade (exec, attach, port-forward)")
			return
		}
		if callerToken(r) == "" {
			writeStatus(w, http.StatusUnauthorized, "Unauthorized", "log in with a bearer token")
			return
		}
		if r.Method == http.MethodGet {
			if !readable(path) {
				writeStatus(w, http.StatusNotFound, "NotFound", "the console reads only /version, /api, /apis and /openapi/v3 documents: "+
					"collections, objects and their status or scale, never a proxy, exec, attach, portforward or log")
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
		for k, v := range relayedResponseHeaders {
			w.Header().Set(k, v)
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
// editor's YAML tab, for a logged-in page only. It reads and changes nothing else.
func (h *Handler) convert(w http.ResponseWriter, r *http.Request) {
	if !checkCSRF(w, r) || !h.checkLogin(w, r) {
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
