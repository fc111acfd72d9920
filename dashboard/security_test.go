package dashboard

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// serve runs ListenAndServe for cfg on a free loopback port until the test
// ends, and returns the dashboard's URL.
func serve(t *testing.T, w *world, cfg *Config) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- ListenAndServe(ctx, w.pool, "127.0.0.1:0", cfg, func(u string) { urls <- u })
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	select {
	case u := <-urls:
		return u
	case err := <-done:
		t.Fatal(err)
		return ""
	}
}

// send sends req to the server at base with Host set to host, as a browser
// does after DNS rebinding (it connects to the server's address, yet names
// the attacker's host).
func send(t *testing.T, method, base, path, host string, form url.Values, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+strings.TrimPrefix(path, "/"), strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Host = host
	for k, v := range header {
		req.Header[k] = v
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestDNSRebinding(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	key := []byte("a key the test knows, so it can forge the form as a rebound page would")
	csrf := w.newHandler(t, &Config{CSRFKey: key}).csrf

	t.Run("WithoutCredentialsAnswersOnlyLoopbackHosts", func(t *testing.T) {
		base := serve(t, w, &Config{CSRFKey: key})
		port := strings.TrimSuffix(base[strings.LastIndex(base, ":")+1:], "/")

		for _, host := range []string{
			"127.0.0.1:" + port, "localhost:" + port, "LocalHost:" + port, "[::1]:" + port, "127.0.0.2:" + port,
			"127.0.0.1", "localhost", "[::1]",
		} {
			status, body := send(t, http.MethodGet, base, "/paused", host, nil, nil)
			require.Equal(t, http.StatusOK, status, "%s: %s", host, body)
		}
		for _, host := range []string{
			"evil.example:" + port, "evil.example", "localhost.evil.example:" + port, "127.0.0.1.evil.example",
			"app.localhost:" + port, "10.0.0.1:" + port, "[::2]:" + port, "0.0.0.0:" + port,
		} {
			status, body := send(t, http.MethodGet, base, "/paused", host, nil, nil)
			require.Equal(t, http.StatusMisdirectedRequest, status, host)
			require.Contains(t, body, "DNS rebinding", host)
			require.NotContains(t, body, "GatewayTimeout", host)
		}

		// the five actions, as the rebound page would send them: same
		// origin (its own host), with the form's token
		id := w.ready[0]
		evil := "evil.example:" + port
		header := http.Header{"Origin": {"http://" + evil}, "Sec-Fetch-Site": {"same-origin"}}
		for _, action := range []string{"pause", "skip", "run-now", "resume", "cancel"} {
			status, _ := send(t, http.MethodPost, base, fmt.Sprintf("/workflows/%d/%s", id, action), evil,
				url.Values{"csrf": {csrf}, "step": {"welcome"}}, header)
			require.Equal(t, http.StatusMisdirectedRequest, status, action)
		}
		status, _ := send(t, http.MethodPost, base, "/bulk/cancel", evil,
			url.Values{"csrf": {csrf}, "state": {"ongoing"}, "upto": {"999999"}}, header)
		require.Equal(t, http.StatusMisdirectedRequest, status)
		require.Equal(t, "ready", w.state(t, id))

		// the same request at the loopback host the operator opened acts
		local := "127.0.0.1:" + port
		status, body := send(t, http.MethodPost, base, fmt.Sprintf("/workflows/%d/pause", id), local,
			url.Values{"csrf": {csrf}}, http.Header{"Origin": {"http://" + local}, "Sec-Fetch-Site": {"same-origin"}})
		require.Equal(t, http.StatusSeeOther, status, body)
		require.Equal(t, "paused", w.state(t, id))
	})

	t.Run("WithCredentialsAnswersAnyHost", func(t *testing.T) {
		base := serve(t, w, &Config{Token: "s3cret"})
		status, _ := send(t, http.MethodGet, base, "/paused", "dashboard.example", nil, nil)
		require.Equal(t, http.StatusUnauthorized, status)
		status, body := send(t, http.MethodGet, base, "/paused", "dashboard.example", nil,
			http.Header{"Authorization": {"Bearer s3cret"}})
		require.Equal(t, http.StatusOK, status, body)

		base = serve(t, w, &Config{BasicAuthUser: "ops", BasicAuthPassword: "pw"})
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.SetBasicAuth("ops", "pw")
		status, body = send(t, http.MethodGet, base, "/paused", "dashboard.example:443", nil, req.Header)
		require.Equal(t, http.StatusOK, status, body)
	})
}

func TestTokenLoginRedirect(t *testing.T) {
	t.Parallel()
	w := newWorld(t)

	// location asks for target with the token and returns where the
	// dashboard sends the browser, checking that it is the dashboard's
	// host.
	location := func(t *testing.T, h http.Handler, target string) string {
		t.Helper()
		r := do(t, h, httptest.NewRequest(http.MethodGet, target, nil))
		require.Equal(t, http.StatusSeeOther, r.status, target)
		require.Contains(t, r.header.Get("Set-Cookie"), tokenCookie+"=s3cret", target)
		loc := r.header.Get("Location")
		require.True(t, strings.HasPrefix(loc, "/"), "%s -> %s", target, loc)
		require.False(t, strings.HasPrefix(loc, "//"), "%s -> %s", target, loc)
		require.NotContains(t, loc, `\`, "%s -> %s", target, loc)
		u, err := url.Parse("http://dashboard.example/x/y")
		require.NoError(t, err)
		ref, err := url.Parse(loc)
		require.NoError(t, err, loc)
		require.Equal(t, "dashboard.example", u.ResolveReference(ref).Host, "%s -> %s", target, loc)
		require.NotContains(t, loc, "token=", target)
		return loc
	}

	h := w.newHandler(t, &Config{Token: "s3cret"})
	for target, want := range map[string]string{
		"//evil.example/?token=s3cret":                       "/",
		"//evil.example/workflows?state=paused&token=s3cret": "/",
		`/\evil.example/?token=s3cret`:                       "/",
		"https:////evil.example/?token=s3cret":               "/",
		"https://evil.example/?token=s3cret":                 "/",
		"http://evil.example//evil.example/?token=s3cret":    "/",
		// escaped, in case a proxy unescapes them
		"/%2F%2Fevil.example/?token=s3cret": "/",
		"/%5Cevil.example/?token=s3cret":    "/",
		"/%09/evil.example/?token=s3cret":   "/",
		// a local path is kept, with the rest of the query
		"/workflows?state=paused&token=s3cret": "/workflows?state=paused",
		"/?token=s3cret":                       "/",
	} {
		require.Equal(t, want, location(t, h, target), target)
	}

	// under a prefix, a path that is not local lands on the dashboard's home
	h = w.newHandler(t, &Config{Token: "s3cret", Prefix: "/geneva"})
	require.Equal(t, "/geneva/", location(t, h, "//evil.example/geneva/?token=s3cret"))
	require.Equal(t, "/geneva/stats", location(t, h, "/geneva/stats?token=s3cret"))
}
