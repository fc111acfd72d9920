package httpauth

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckAddr(t *testing.T) {
	t.Parallel()
	open := &Guard{Name: "metrics server"}
	for _, addr := range []string{"127.0.0.1:9187", "[::1]:9187", "localhost:0", "127.0.0.2:80"} {
		require.NoError(t, open.CheckAddr(addr), addr)
	}
	for _, addr := range []string{":9187", "0.0.0.0:9187", "[::]:9187", "192.168.1.5:9187", "example.com:80"} {
		require.ErrorContains(t, open.CheckAddr(addr), "refusing to serve the metrics server on "+addr+", which is not a loopback address", addr)
		require.NoError(t, (&Guard{Token: "t"}).CheckAddr(addr), addr)
		require.NoError(t, (&Guard{BasicAuthUser: "u", BasicAuthPassword: "p"}).CheckAddr(addr), addr)
	}
	require.Error(t, open.CheckAddr("nonsense"))
}

func TestLocalPath(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"/", "/workflows", "/geneva/stats", "/a//b", "/%2F%2Fevil"} {
		require.True(t, LocalPath(path), path)
	}
	for _, path := range []string{
		"", "//evil.example", "///evil.example", `/\evil.example`, `\\evil.example`, `/a\b`,
		"/\t/evil.example", "/\n/evil.example", "https://evil.example", "evil.example", "javascript:alert(1)",
	} {
		require.False(t, LocalPath(path), path)
	}
}

func TestLoopbackHost(t *testing.T) {
	t.Parallel()
	for _, host := range []string{
		"localhost", "localhost:8080", "LOCALHOST:8080", "127.0.0.1", "127.0.0.1:8080", "127.1.2.3:80",
		"[::1]", "[::1]:8080",
	} {
		require.True(t, LoopbackHost(host), host)
	}
	for _, host := range []string{
		"", "evil.example", "evil.example:8080", "localhost.evil.example", "127.0.0.1.evil.example:80",
		"app.localhost", "localhost.", "0.0.0.0:8080", "10.0.0.1", "[::]:8080", "[::2]", "127.1:80",
		"2130706433", "[fe80::1%25lo]:80", "127.0.0.1:80:80",
	} {
		require.False(t, LoopbackHost(host), host)
	}
}

func TestHandler(t *testing.T) {
	t.Parallel()
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	serve := func(g *Guard, host string, header http.Header) int {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Host = host
		for k, v := range header {
			req.Header[k] = v
		}
		rec := httptest.NewRecorder()
		g.Handler(ok).ServeHTTP(rec, req)
		return rec.Code
	}

	open := &Guard{Name: "metrics server"}
	require.Equal(t, http.StatusTeapot, serve(open, "127.0.0.1:9187", nil))
	require.Equal(t, http.StatusMisdirectedRequest, serve(open, "evil.example:9187", nil))

	token := &Guard{Name: "metrics server", Cookie: "c", Token: "t0k"}
	require.Equal(t, http.StatusUnauthorized, serve(token, "127.0.0.1:9187", nil))
	require.Equal(t, http.StatusTeapot, serve(token, "evil.example", http.Header{"Authorization": {"Bearer t0k"}}))
	require.Equal(t, http.StatusTeapot, serve(token, "evil.example", http.Header{"Cookie": {"c=t0k"}}))
}
