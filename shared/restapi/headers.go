package restapi

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
)

// The REST API and its Swagger UI share an origin: whatever runs on it could call the API
// with a token typed into the page. So every answer of the API is data a browser neither
// shows as a document nor runs (apiHeaders), and the docs page runs only Swagger UI's own
// scripts (docsHeaders): its files from the binary and its two inline scripts, by hash.

// apiHeaders go on every answer of the API.
var apiHeaders = map[string]string{
	"Content-Security-Policy": "sandbox; default-src 'none'; frame-ancestors 'none'",
	"X-Content-Type-Options":  "nosniff",
	"X-Frame-Options":         "DENY",
	"Referrer-Policy":         "no-referrer",
	"Cache-Control":           "no-store",
}

// inlineScript is a script element's inline code, as Swagger UI's page has them.
var inlineScript = regexp.MustCompile(`(?s)<script>(.*?)</script>`)

// docsPolicy is the Content-Security-Policy of docs' page: its own origin, and the inline
// scripts the page holds by their SHA-256. Swagger UI sets style attributes as it renders,
// so inline styles are allowed; nothing is framed, posted or loaded from elsewhere.
func docsPolicy(docs http.Handler) (string, error) {
	rec := httptest.NewRecorder()
	docs.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, docsPath, nil))
	if rec.Code != http.StatusOK {
		return "", fmt.Errorf("rendering the docs page: %d", rec.Code)
	}
	hashes := []string{}
	for _, m := range inlineScript.FindAllStringSubmatch(rec.Body.String(), -1) {
		sum := sha256.Sum256([]byte(m[1]))
		hashes = append(hashes, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
	}
	return "default-src 'self'; script-src 'self' " + strings.Join(hashes, " ") + "; style-src 'self' 'unsafe-inline'; " +
		"img-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'", nil
}

// withHeaders serves h with headers set over the API's.
func withHeaders(h http.Handler, headers map[string]string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		h.ServeHTTP(w, r)
	})
}
