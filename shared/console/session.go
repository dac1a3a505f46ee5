package console

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	sessionPath = Path + "session"
	// csrfHeader carries the CSRF cookie's value back on every change.
	csrfHeader = "X-CSRF-Token"
	jsonType   = "application/json"
)

// Cookie names. Over HTTPS they take the __Host- prefix, which the browser accepts only from
// this origin with Secure and Path=/, so no other site, sub-domain or port can set them.
func tokenCookie(r *http.Request) string { return cookiePrefix(r) + "quintet-token" }
func csrfCookie(r *http.Request) string  { return cookiePrefix(r) + "quintet-csrf" }

func cookiePrefix(r *http.Request) string {
	if r.TLS != nil {
		return "__Host-"
	}
	return ""
}

// user is who the API server says a token is (a SelfSubjectReview's userInfo).
type user struct {
	Username string   `json:"username"`
	Groups   []string `json:"groups,omitempty"`
}

// sessionAnswer is what GET and POST on the session answer.
type sessionAnswer struct {
	User  user   `json:"user"`
	Title string `json:"title"`
}

// session answers who the logged-in token is, or 401 when there is none or the API server no
// longer accepts it.
func (h *Handler) session(w http.ResponseWriter, r *http.Request) {
	token := callerToken(r)
	if token == "" {
		writeStatus(w, http.StatusUnauthorized, "Unauthorized", "log in with a bearer token")
		return
	}
	h.answerWho(w, r, token, false)
}

// login takes {"token": "..."} as JSON from the console's own page, asks the API server who
// the token is and, if it accepts it, sets the session's cookies.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		writeStatus(w, http.StatusForbidden, "Forbidden", "log in from the console's own page")
		return
	}
	if ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";"); strings.TrimSpace(ct) != jsonType {
		writeStatus(w, http.StatusUnsupportedMediaType, "UnsupportedMediaType", "send the token as JSON: {\"token\": \"...\"}")
		return
	}
	var body struct {
		Token string `json:"token"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&body); err != nil {
		writeStatus(w, http.StatusBadRequest, "BadRequest", "send the token as JSON: {\"token\": \"...\"}: "+err.Error())
		return
	}
	token := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(body.Token), "Bearer "))
	if token == "" || strings.ContainsAny(token, " \t\r\n;,") {
		writeStatus(w, http.StatusBadRequest, "BadRequest", "the token is empty or has spaces in it: paste what kubectl create token printed")
		return
	}
	h.answerWho(w, r, token, true)
}

// logout clears the session's cookies.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	if !checkCSRF(w, r) {
		return
	}
	for _, name := range []string{tokenCookie(r), csrfCookie(r)} {
		http.SetCookie(w, &http.Cookie{Name: name, Path: "/", MaxAge: -1, Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	}
	w.WriteHeader(http.StatusNoContent)
}

// answerWho asks the API server who token is; when it accepts the token it answers the user
// and, for a login, sets the cookies.
func (h *Handler) answerWho(w http.ResponseWriter, r *http.Request, token string, setCookies bool) {
	who, ok := h.who(w, r, token)
	if !ok {
		return
	}
	if setCookies {
		csrf, err := randomToken()
		if err != nil {
			writeStatus(w, http.StatusInternalServerError, "InternalError", err.Error())
			return
		}
		maxAge := int(h.opts.SessionTimeout.Seconds())
		// Secure even over --api-insecure's plain HTTP: browsers keep Secure cookies of loopback
		// addresses, the only ones it serves.
		http.SetCookie(w, &http.Cookie{Name: tokenCookie(r), Value: token, Path: "/", MaxAge: maxAge,
			Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
		// The page reads this one (so not HttpOnly) and sends it back as the X-CSRF-Token header.
		http.SetCookie(w, &http.Cookie{Name: csrfCookie(r), Value: csrf, Path: "/", MaxAge: maxAge, //nolint:gosec // read by the page
			Secure: true, SameSite: http.SameSiteStrictMode})
	}
	w.Header().Set("Content-Type", jsonType)
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(sessionAnswer{User: who, Title: h.opts.Title})
}

// who asks the API server who token is; when it does not accept the token, or does not
// answer, it answers the request with why (401 or 502) and says so.
func (h *Handler) who(w http.ResponseWriter, r *http.Request, token string) (user, bool) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	who, status, err := h.selfSubjectReview(ctx, token)
	switch {
	case err != nil:
		h.opts.Log.Error(err, "The API server did not answer a SelfSubjectReview")
		writeStatus(w, http.StatusBadGateway, "ServiceUnavailable", "the Kubernetes API server did not answer: "+err.Error())
		return user{}, false
	case status == http.StatusUnauthorized:
		writeStatus(w, http.StatusUnauthorized, "Unauthorized", "the API server does not accept this token (expired, revoked or mistyped): log in again")
		return user{}, false
	case status != http.StatusCreated && status != http.StatusOK:
		writeStatus(w, http.StatusBadGateway, "InternalError", fmt.Sprintf("the API server answered %d to a SelfSubjectReview", status))
		return user{}, false
	}
	return who, true
}

// selfSubjectReview asks the API server who token is; it answers the user and the HTTP status.
func (h *Handler) selfSubjectReview(ctx context.Context, token string) (user, int, error) {
	body := []byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`)
	u := h.upstream.JoinPath("apis", "authentication.k8s.io", "v1", "selfsubjectreviews")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return user{}, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", jsonType)
	req.Header.Set("Accept", jsonType)
	resp, err := h.transport.RoundTrip(req)
	if err != nil {
		return user{}, 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	var review struct {
		Status struct {
			UserInfo user `json:"userInfo"`
		} `json:"status"`
	}
	if resp.StatusCode == http.StatusCreated || resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&review); err != nil {
			return user{}, 0, fmt.Errorf("reading the SelfSubjectReview: %w", err)
		}
	}
	return review.Status.UserInfo, resp.StatusCode, nil
}

// callerToken is the session cookie's token, or "".
func callerToken(r *http.Request) string {
	c, err := r.Cookie(tokenCookie(r))
	if err != nil {
		return ""
	}
	return c.Value
}

// checkCSRF lets a change through only from the console's own origin with the CSRF cookie's
// value in the X-CSRF-Token header; otherwise it answers 403.
func checkCSRF(w http.ResponseWriter, r *http.Request) bool {
	c, err := r.Cookie(csrfCookie(r))
	header := r.Header.Get(csrfHeader)
	if err != nil || header == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(header)) != 1 || !sameOrigin(r) {
		writeStatus(w, http.StatusForbidden, "Forbidden", "a change needs the console's CSRF token from its own page: reload the page and log in again")
		return false
	}
	return true
}

// sameOrigin says whether a request comes from a page of this origin: the browser's Origin
// header names this host, or, without one, Sec-Fetch-Site says same-origin. A request with
// neither is no page's of this origin (every browser the console supports sends one of them
// with a fetch that changes something).
func sameOrigin(r *http.Request) bool {
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		return err == nil && u.Host == r.Host
	}
	return r.Header.Get("Sec-Fetch-Site") == "same-origin"
}

// checkLogin lets a request through only with a session whose token the API server still
// accepts; otherwise it answers 401 (or 502 when the API server does not answer).
func (h *Handler) checkLogin(w http.ResponseWriter, r *http.Request) bool {
	token := callerToken(r)
	if token == "" {
		writeStatus(w, http.StatusUnauthorized, "Unauthorized", "log in with a bearer token")
		return false
	}
	_, ok := h.who(w, r, token)
	return ok
}

func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// writeStatus answers an error of the console's own as a Kubernetes Status, as the API
// server's errors come.
func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, message string) {
	w.Header().Set("Content-Type", jsonType)
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: metav1.StatusFailure, Message: message, Reason: reason, Code: int32(code)}) //nolint:gosec // an HTTP status
}
