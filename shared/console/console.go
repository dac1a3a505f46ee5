// Package console serves a web console for the Quintet kinds: lists that update live, a page
// per object with its conditions, Events and the objects it owns, forms generated from each
// CRD's schema, and one-click changes. The page is plain ES modules embedded in the binary
// (no build step, nothing fetched from elsewhere: the Content-Security-Policy allows the
// console's own origin only).
//
// The console has no privilege of its own. A person logs in with a bearer token (their own,
// or a ServiceAccount's from kubectl create token); the console keeps it in an HttpOnly,
// SameSite=Strict cookie and relays the page's Kubernetes API requests under /console/k8s/
// with that token and nothing else of the caller's. The API server authenticates, authorizes
// and validates each one. Every change also needs the CSRF token the page reads from a second
// cookie and sends back as a header (a double-submit check), from the console's own origin.
package console

import (
	"embed"
	"io/fs"
	"net/http"
	"net/url"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/quintet-operators/quintet/shared/restapi"
)

// Path is where the console is served.
const Path = "/console/"

//go:embed assets
var assets embed.FS

// securityHeaders go on every answer: the page may load and call its own origin only, may not
// be framed, and sends no Referer elsewhere.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'",
	"X-Content-Type-Options": "nosniff",
	"X-Frame-Options":        "DENY",
	"Referrer-Policy":        "no-referrer",
}

// Options tune the console; zero values take the defaults.
type Options struct {
	// Title heads the page (default "Quintet console").
	Title string
	// MaxBodyBytes limits what a change sends (default 1 MiB).
	MaxBodyBytes int64
	// SessionTimeout is how long the login cookie lasts (default 8h); a token that expires
	// sooner asks the page to log in again.
	SessionTimeout time.Duration
	Log            logr.Logger
}

// Handler serves the console under Path.
type Handler struct {
	opts     Options
	upstream *url.URL
	// transport reaches the API server over TLS with no credentials of its own.
	transport http.RoundTripper
	mux       *http.ServeMux
}

// New builds the console for the API server of cfg; cfg's credentials are dropped.
func New(cfg *rest.Config, opts Options) (*Handler, error) {
	if opts.Title == "" {
		opts.Title = "Quintet console"
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = 8 * time.Hour
	}
	upstream, transport, err := restapi.Upstream(cfg)
	if err != nil {
		return nil, err
	}
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	h := &Handler{opts: opts, upstream: upstream, transport: transport, mux: http.NewServeMux()}
	h.mux.Handle("GET "+Path, http.StripPrefix(Path, http.FileServerFS(static)))
	h.mux.HandleFunc("GET "+sessionPath, h.session)
	h.mux.HandleFunc("POST "+sessionPath, h.login)
	h.mux.HandleFunc("DELETE "+sessionPath, h.logout)
	h.mux.HandleFunc("POST "+convertPath, h.convert)
	relay := h.proxy()
	for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		h.mux.Handle(method+" "+proxyPath, relay)
	}
	return h, nil
}

// ServeHTTP serves the console with its security headers.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for k, v := range securityHeaders {
		w.Header().Set(k, v)
	}
	h.mux.ServeHTTP(w, r)
}
