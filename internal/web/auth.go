package web

import (
	"crypto/subtle"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/storbench/storbench/internal/render"
)

// tokenCookie carries the token a browser gave on the login page.
const tokenCookie = "storbench_token"

// headers sets what every answer carries: nothing is loaded from
// elsewhere, no page can be framed, types are not guessed.
func headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// gate lets a request through when no token is set or it carries the
// token; a browser asking for a page is sent to the login page, anything
// else gets 401.
func (s *Server) gate(next http.Handler) http.Handler {
	if s.opts.Token == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The login form and the liveness probe (which says nothing but
		// "ok") need no token.
		if r.URL.Path == "/login" || r.URL.Path == "/healthz" || s.authorized(r) {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "text/html") {
			http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="storbench"`)
		http.Error(w, "a bearer token is required (Authorization: Bearer TOKEN)", http.StatusUnauthorized)
	})
}

func (s *Server) authorized(r *http.Request) bool {
	if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && s.matches(strings.TrimSpace(auth)) {
		return true
	}
	c, err := r.Cookie(tokenCookie)
	return err == nil && s.matches(c.Value)
}

func (s *Server) matches(given string) bool {
	return subtle.ConstantTimeCompare([]byte(given), []byte(s.opts.Token)) == 1
}

// login shows the token form (GET) or checks the token and keeps it in
// a cookie (POST).
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	next := r.FormValue("next")
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		next = "/"
	}
	page := &render.DashboardLogin{DashboardPage: s.page("Token required", ""), Next: next}
	status := http.StatusOK
	switch {
	case s.opts.Token == "":
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	case r.Method == http.MethodPost && s.matches(r.PostFormValue("token")):
		http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: s.opts.Token, Path: "/", HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https"})
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	case r.Method == http.MethodPost:
		page.Problem = "That is not the token this dashboard was started with."
		status = http.StatusUnauthorized
	}
	s.html(w, status, func(b io.Writer) error { return render.DashboardLoginHTML(b, page) })
}
