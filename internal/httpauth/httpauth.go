// Package httpauth is the access rule the dashboard and geneva metrics share,
// written once:
//
//   - a token (as "Authorization: Bearer TOKEN", as a cookie, or once as
//     ?token=TOKEN, which sets the cookie and redirects to a local path) or
//     HTTP basic credentials;
//   - no listening on an address that is not a loopback one without one of
//     them (Guard.CheckAddr);
//   - without one of them, an answer only to a loopback Host (localhost,
//     127.0.0.0/8, [::1]), so that a web page the operator visits cannot reach
//     the server through DNS rebinding (Guard.CheckHost).
package httpauth

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Guard is the credentials of one server, and the names its answers use.
// A Guard without Token and BasicAuthUser has no credentials.
type Guard struct {
	// BasicAuthUser and BasicAuthPassword, when BasicAuthUser is set, are
	// accepted as HTTP basic credentials.
	BasicAuthUser     string
	BasicAuthPassword string

	// Cookie is the name of the cookie a ?token= login sets.
	Cookie string

	// Name is what the guard protects, in messages and the basic realm:
	// "dashboard", "metrics server".
	Name string

	// Prefix is the path the server's pages are under, without a trailing
	// slash ("" for the root): the cookie's path, and where a ?token= login
	// whose own path is not a local one lands.
	Prefix string

	// Token, when set, is accepted as "Authorization: Bearer TOKEN", as the
	// cookie, or once as ?token=TOKEN on a GET.
	Token string
}

// Authenticate checks the token or basic credentials, when the guard has
// them, and answers 401 when they are missing or wrong. A GET with the right
// ?token= sets the cookie and redirects to the same path without the token,
// or to Prefix + "/" when the path is not a local one (//host, /\host,
// /%2F%2Fhost), so that the login is no open redirect. It returns true
// when the request may go on.
func (g *Guard) Authenticate(w http.ResponseWriter, r *http.Request) bool {
	if !g.HasCredentials() {
		return true
	}
	if g.Token != "" {
		if token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && equal(token, g.Token) {
			return true
		}
		if cookie, err := r.Cookie(g.Cookie); err == nil && equal(cookie.Value, g.Token) {
			return true
		}
		if token := r.URL.Query().Get("token"); token != "" && equal(token, g.Token) && r.Method == http.MethodGet {
			http.SetCookie(w, &http.Cookie{
				Name: g.Cookie, Value: g.Token, Path: g.Prefix + "/",
				HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
			})
			http.Redirect(w, r, g.afterLogin(r), http.StatusSeeOther)
			return false
		}
	}
	if g.BasicAuthUser != "" {
		if user, password, ok := r.BasicAuth(); ok && equal(user, g.BasicAuthUser) && equal(password, g.BasicAuthPassword) {
			return true
		}
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Basic realm="Geneva %s", charset="UTF-8"`, g.Name))
	}
	http.Error(w, fmt.Sprintf("Unauthorized: this %s needs its token or password.", g.Name), http.StatusUnauthorized)
	return false
}

// afterLogin is where a ?token= login goes: the request's path and query
// without the token when the path is a local one, escaped and unescaped
// (/%2F%2Fhost is local, but a proxy may unescape it), else Prefix + "/".
func (g *Guard) afterLogin(r *http.Request) string {
	path := r.URL.EscapedPath()
	if r.URL.Opaque != "" || !LocalPath(path) || !LocalPath(r.URL.Path) {
		return g.Prefix + "/"
	}
	q := r.URL.Query()
	q.Del("token")
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return path
}

// CheckAddr returns an error when addr (host:port) is not a loopback address
// and the guard has no credentials: what it protects is never open to a
// network without one.
func (g *Guard) CheckAddr(addr string) error {
	if g.HasCredentials() {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("geneva: %s address %q: %w", g.Name, addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("geneva: refusing to serve the %s on %s, which is not a loopback address, without a token or basic auth (set one, or listen on 127.0.0.1)", g.Name, addr)
}

// CheckHost answers 421 Misdirected Request when the guard has no
// credentials and the request's Host is not a loopback one (see
// LoopbackHost). It returns true when the request may go on.
//
// Without it, a page on another site could reach a server on the operator's
// loopback interface by DNS rebinding: its name resolves first to the
// attacker's server, then to 127.0.0.1, so the browser treats the server's
// pages as the attacker's own origin, and reads them and posts their forms.
// The browser still names the attacker's host in Host, so the check stops
// it; with credentials, the page has none to send.
func (g *Guard) CheckHost(w http.ResponseWriter, r *http.Request) bool {
	if g.HasCredentials() || LoopbackHost(r.Host) {
		return true
	}
	http.Error(w, fmt.Sprintf("Misdirected Request: this %s has no token or password, so it answers only to the host names "+
		"localhost, 127.0.0.1 or [::1] (a guard against DNS rebinding). Open it at one of them, "+
		"or give it a token or basic auth.", g.Name), http.StatusMisdirectedRequest)
	return false
}

// Handler returns next behind CheckHost and Authenticate.
func (g *Guard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.CheckHost(w, r) && g.Authenticate(w, r) {
			next.ServeHTTP(w, r)
		}
	})
}

// HasCredentials tells whether the guard requires a token or basic
// credentials.
func (g *Guard) HasCredentials() bool {
	return g.Token != "" || g.BasicAuthUser != ""
}

// LocalPath tells whether a browser reads path, as a Location, as a path on
// the same host: it starts with one slash, not two, and has no backslash
// (which browsers read as a slash) and no control character (which they
// drop).
func LocalPath(path string) bool {
	if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") {
		return false
	}
	return !strings.ContainsFunc(path, func(c rune) bool { return c == '\\' || c < 0x20 || c == 0x7f })
}

// LoopbackHost tells whether host (a Host header: a name or address, with
// or without a port) is localhost, an address in 127.0.0.0/8 or [::1]. Other
// names under .localhost are not: some resolvers send them to DNS.
func LoopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}

func equal(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
