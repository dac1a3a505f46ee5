package restapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/swaggest/swgui"
	"github.com/swaggest/swgui/v5emb"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
)

const (
	apiPrefix  = "/api/v1"
	docsPath   = apiPrefix + "/docs/"
	jsonType   = "application/json"
	mergePatch = "application/merge-patch+json"
	applyPatch = "application/apply-patch+yaml"
	// defaultFieldManager names server-side applies whose caller names no fieldManager.
	defaultFieldManager = "restapi"
)

// HandlerOptions tune a Handler; zero values take the defaults.
type HandlerOptions struct {
	// Title and Version describe the API in its OpenAPI document.
	Title, Version string
	// MaxBodyBytes limits a request's body (default 1 MiB; the API server takes at most 3 MiB).
	MaxBodyBytes int64
	// RequestTimeout bounds every request to the API server but watches (default 30s).
	RequestTimeout time.Duration
	// WatchTimeout bounds a watch stream (default 30m); the client resumes with Last-Event-ID.
	WatchTimeout time.Duration
	// CORSOrigins are the exact origins whose pages may call the API; none by default.
	CORSOrigins []string
	Log         logr.Logger
}

// Handler serves the REST API for a set of kinds, forwarding each request, with the caller's
// bearer token and nothing else of the caller's, to the API server.
type Handler struct {
	opts     HandlerOptions
	upstream *url.URL
	// client reaches the API server over TLS with no credentials of its own.
	client   *http.Client
	kinds    map[string]Kind
	document []byte
	mux      *http.ServeMux
}

// NewHandler builds the API for kinds. cfg locates the API server (its address and CA); its
// credentials are dropped.
func NewHandler(cfg *rest.Config, kinds []Kind, opts HandlerOptions) (*Handler, error) {
	opts = withDefaults(opts)
	upstream, transport, err := Upstream(cfg)
	if err != nil {
		return nil, err
	}
	client := &http.Client{Transport: transport}
	document, err := servedDocument(kinds, opts)
	if err != nil {
		return nil, err
	}
	h := &Handler{opts: opts, upstream: upstream, client: client, kinds: map[string]Kind{}, document: document, mux: http.NewServeMux()}
	for _, k := range kinds {
		h.kinds[k.Plural] = k
	}
	if err := h.routes(); err != nil {
		return nil, err
	}
	return h, nil
}

// Upstream is the address of cfg's API server and a transport to it (its CA, TLS settings)
// without cfg's credentials: what a caller's request is sent through, with the caller's token.
func Upstream(cfg *rest.Config) (*url.URL, http.RoundTripper, error) {
	anonymous := rest.AnonymousClientConfig(cfg)
	upstream, _, err := rest.DefaultServerUrlFor(anonymous)
	if err != nil {
		return nil, nil, fmt.Errorf("the API server's address: %w", err)
	}
	transport, err := rest.TransportFor(anonymous)
	if err != nil {
		return nil, nil, err
	}
	return upstream, transport, nil
}

func withDefaults(o HandlerOptions) HandlerOptions {
	if o.Title == "" {
		o.Title = "REST API"
	}
	if o.Version == "" {
		o.Version = "v1"
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 30 * time.Second
	}
	if o.WatchTimeout <= 0 {
		o.WatchTimeout = 30 * time.Minute
	}
	return o
}

func (h *Handler) routes() error {
	h.mux.HandleFunc("GET "+apiPrefix+"/openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", jsonType)
		_, _ = w.Write(h.document)
	})
	h.mux.Handle("GET "+apiPrefix+"/docs", http.RedirectHandler(docsPath, http.StatusMovedPermanently))
	// The token typed into "Authorize" stays in the page's memory only: no local storage
	// that anything else on the origin could read.
	docs := v5emb.NewHandlerWithConfig(swgui.Config{Title: h.opts.Title, SwaggerJSON: apiPrefix + "/openapi.json", BasePath: docsPath})
	policy, err := docsPolicy(docs)
	if err != nil {
		return err
	}
	h.mux.Handle("GET "+docsPath, withHeaders(docs, map[string]string{"Content-Security-Policy": policy, "Cache-Control": "no-cache"}))
	collection, item := collectionPath("{plural}"), itemPath("{plural}")
	h.mux.HandleFunc("GET "+collection, h.serve(h.list))
	h.mux.HandleFunc("POST "+collection, h.serve(h.create))
	h.mux.HandleFunc("GET "+item, h.serve(h.get))
	h.mux.HandleFunc("PUT "+item, h.serve(h.replace))
	h.mux.HandleFunc("PATCH "+item, h.serve(h.patch))
	h.mux.HandleFunc("DELETE "+item, h.serve(h.delete))
	return nil
}

// ServeHTTP serves the API with its security headers, answering CORS preflights for the
// configured origins.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for k, v := range apiHeaders {
		w.Header().Set(k, v)
	}
	if origin := r.Header.Get("Origin"); origin != "" && h.corsAllowed(origin) {
		w.Header().Set("Access-Control-Allow-Origin", origin)
		w.Header().Add("Vary", "Origin")
		if r.Method == http.MethodOptions {
			w.Header().Set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE")
			w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
			w.Header().Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) corsAllowed(origin string) bool {
	return slices.Contains(h.opts.CORSOrigins, origin)
}

// call is one request of a caller, resolved to its kind and object.
type call struct {
	w         http.ResponseWriter
	r         *http.Request
	token     string
	kind      Kind
	namespace string
	name      string // "" for the collection
}

// serve checks what every request needs (a bearer token, a served kind, valid names) and
// hands the request to op.
func (h *Handler) serve(op func(c *call)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearerToken(r.Header.Get("Authorization"))
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="restapi"`)
			writeStatus(w, http.StatusUnauthorized, "Unauthorized",
				"a bearer token is required: Authorization: Bearer <token> (e.g. from kubectl create token)", nil)
			return
		}
		kind, ok := h.kinds[r.PathValue("plural")]
		if !ok {
			writeStatus(w, http.StatusNotFound, "NotFound", fmt.Sprintf("this API serves no %q", r.PathValue("plural")), nil)
			return
		}
		c := &call{w: w, r: r, token: token, kind: kind, namespace: r.PathValue(fieldNamespace), name: r.PathValue(fieldName)}
		var causes []cause
		for _, msg := range validation.IsDNS1123Label(c.namespace) {
			causes = append(causes, cause{Field: fieldNamespace, Message: msg, Reason: "FieldValueInvalid"})
		}
		if c.name != "" {
			for _, msg := range validation.IsDNS1123Subdomain(c.name) {
				causes = append(causes, cause{Field: "metadata.name", Message: msg, Reason: "FieldValueInvalid"})
			}
		}
		if len(causes) > 0 {
			writeStatus(w, http.StatusBadRequest, "BadRequest", "invalid namespace or name in the path", causes)
			return
		}
		op(c)
	}
}

// bearerToken reads "Bearer <token>" (the scheme in any case).
func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t\r\n") {
		return "", false
	}
	return token, true
}

func (h *Handler) list(c *call) {
	if c.r.URL.Query().Get("watch") == "true" || c.r.URL.Query().Get("watch") == "1" {
		h.watch(c)
		return
	}
	query, ok := allowedQuery(c, "labelSelector", "fieldSelector", "limit", "continue", "resourceVersion", "resourceVersionMatch", "watch")
	if !ok {
		return
	}
	query.Del("watch")
	h.forward(c, http.MethodGet, query, "", nil)
}

func (h *Handler) get(c *call) {
	if query, ok := allowedQuery(c); ok {
		h.forward(c, http.MethodGet, query, "", nil)
	}
}

func (h *Handler) create(c *call) {
	h.write(c, http.MethodPost, jsonType)
}

func (h *Handler) replace(c *call) {
	h.write(c, http.MethodPut, jsonType)
}

func (h *Handler) patch(c *call) {
	contentType, _, _ := strings.Cut(c.r.Header.Get("Content-Type"), ";")
	switch strings.TrimSpace(contentType) {
	case mergePatch, applyPatch:
		h.write(c, http.MethodPatch, strings.TrimSpace(contentType))
	default:
		writeStatus(c.w, http.StatusUnsupportedMediaType, "UnsupportedMediaType",
			fmt.Sprintf("PATCH takes %s (a JSON merge patch) or %s (server-side apply), not %q", mergePatch, applyPatch, contentType), nil)
	}
}

func (h *Handler) delete(c *call) {
	query, ok := allowedQuery(c, "dryRun", "propagationPolicy", "gracePeriodSeconds")
	if ok && checkDryRun(c, query) {
		h.forward(c, http.MethodDelete, query, "", nil)
	}
}

// write sends a create, replace or patch: the body checked and completed (decodeBody), strict
// field validation always on.
func (h *Handler) write(c *call, method, contentType string) {
	params := []string{"dryRun", "fieldManager"}
	if contentType == applyPatch {
		params = append(params, "force")
	}
	query, ok := allowedQuery(c, params...)
	if !ok || !checkDryRun(c, query) {
		return
	}
	query.Set("fieldValidation", "Strict")
	if contentType == applyPatch && query.Get("fieldManager") == "" {
		query.Set("fieldManager", defaultFieldManager)
	}
	raw, err := io.ReadAll(http.MaxBytesReader(c.w, c.r.Body, h.opts.MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		writeStatus(c.w, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge",
			fmt.Sprintf("the body is larger than %d bytes", tooLarge.Limit), nil)
		return
	}
	if err != nil {
		writeStatus(c.w, http.StatusBadRequest, "BadRequest", "reading the body: "+err.Error(), nil)
		return
	}
	body, err := decodeBody(raw, c.kind, c.namespace, c.name, contentType)
	if err != nil {
		writeStatus(c.w, http.StatusBadRequest, "BadRequest", err.Error(), nil)
		return
	}
	h.forward(c, method, query, contentType, body)
}

// allowedQuery returns the request's query if it names only the given parameters, or
// answers 400 naming the others.
func allowedQuery(c *call, names ...string) (url.Values, bool) {
	query := c.r.URL.Query()
	var unknown []string
	for key := range query {
		if !slices.Contains(names, key) {
			unknown = append(unknown, key)
		}
	}
	if len(unknown) > 0 {
		writeStatus(c.w, http.StatusBadRequest, "BadRequest",
			fmt.Sprintf("unknown query parameters %v: this request takes %v", unknown, names), nil)
		return nil, false
	}
	return query, true
}

func checkDryRun(c *call, query url.Values) bool {
	if v, ok := query["dryRun"]; ok && (len(v) != 1 || v[0] != "All") {
		writeStatus(c.w, http.StatusBadRequest, "BadRequest", `dryRun takes one value: "All"`,
			[]cause{{Field: "dryRun", Message: `Unsupported value: must be "All"`, Reason: "FieldValueNotSupported"}})
		return false
	}
	return true
}

// upstreamRequest builds the request to the API server for a call: its object's URL, the
// caller's token, and no other header of the caller's (Impersonate-* among them).
func (h *Handler) upstreamRequest(ctx context.Context, c *call, method string, query url.Values, contentType string, body []byte) (*http.Request, error) {
	segments := []string{"apis", c.kind.Group, c.kind.Version, "namespaces", c.namespace, c.kind.Plural}
	if c.name != "" {
		segments = append(segments, c.name)
	}
	u := h.upstream.JoinPath(segments...)
	u.RawQuery = query.Encode()
	var reader io.Reader
	if body != nil {
		reader = strings.NewReader(string(body))
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), reader)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", jsonType)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req, nil
}

// send makes a call to the API server. When that fails it answers the caller and returns nil.
func (h *Handler) send(ctx context.Context, c *call, method string, query url.Values, contentType string, body []byte) *http.Response {
	req, err := h.upstreamRequest(ctx, c, method, query, contentType, body)
	if err != nil {
		writeStatus(c.w, http.StatusInternalServerError, "InternalError", err.Error(), nil)
		return nil
	}
	resp, err := h.client.Do(req)
	if err != nil {
		h.opts.Log.Error(err, "The API server did not answer", "method", method, "path", req.URL.Path)
		writeStatus(c.w, http.StatusBadGateway, "ServiceUnavailable", "the Kubernetes API server did not answer: "+err.Error(), nil)
		return nil
	}
	return resp
}

// forward makes the call to the API server and copies its answer (status code, a Status
// with its causes for errors) back to the caller.
func (h *Handler) forward(c *call, method string, query url.Values, contentType string, body []byte) {
	ctx, cancel := context.WithTimeout(c.r.Context(), h.opts.RequestTimeout)
	defer cancel()
	if resp := h.send(ctx, c, method, query, contentType, body); resp != nil {
		defer func() { _ = resp.Body.Close() }()
		copyAnswer(c.w, resp)
	}
}

// copyAnswer copies an API server's answer to the caller: its status, body, and the headers
// a client acts on (Retry-After with a 429, Warning for deprecated or dropped fields).
func copyAnswer(w http.ResponseWriter, resp *http.Response) {
	for _, header := range []string{"Content-Type", "Retry-After", "Warning"} {
		if v := resp.Header.Values(header); len(v) > 0 {
			w.Header()[header] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}
