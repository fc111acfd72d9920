package worker_test

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/worker"
)

// An HTTP step reaches only what its worker allows: by default no loopback,
// link-local or private address, whether the URL names it or a host name
// resolves to it (localhost), checked at each connection. A refused
// destination fails the step with http.destination_refused, and the endpoint
// gets nothing. AllowHosts allows names (whatever they resolve to),
// addresses and CIDR blocks, or "*" any destination.
func TestHTTPDestinations(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ep := newEndpoint(t, nil, map[string]http.HandlerFunc{"/ok": reply(http.StatusOK, "")})
	port := ep.URL[strings.LastIndex(ep.URL, ":"):]
	// each policy is a worker's, which runs the steps of its queue
	policies := map[string][]string{
		"geneva_http": nil, "by_address": {"127.0.0.1"}, "by_name": {"localhost"},
		"by_cidr": {"10.0.0.0/8", "127.0.0.0/8"}, "any": {"*"},
	}
	for _, c := range []struct {
		queue, host string
		refused     bool
	}{
		{"geneva_http", "127.0.0.1", true},
		{"geneva_http", "localhost", true},
		{"geneva_http", "[::1]", true},
		{"by_address", "127.0.0.1", false},
		{"by_address", "[::1]", true},
		{"by_name", "localhost", false},
		{"by_name", "127.0.0.1", true},
		{"by_cidr", "127.0.0.1", false},
		{"any", "127.0.0.1", false},
	} {
		workflowType := c.queue + " " + c.host
		b.defineHTTP(t, workflowType, `{"on_exception": {"action": "pause"}, "steps": [{"name": "a",
			"http": {"url": "http://`+c.host+port+`/ok", "timeout": 5, "queue": "`+c.queue+`"}}]}`)
		t.Run(workflowType, func(t *testing.T) {
			t.Parallel()
			id := b.create(t, workflowType)
			b.waitState(t, id, goclient.StatePaused, goclient.StateFinished)
			if !c.refused {
				require.Equal(t, []string{"a: success"}, b.outcomes(t, id))
				return
			}
			require.Equal(t, []string{"a: paused_by_exception"}, b.outcomes(t, id))
			class, message := b.lastError(t, id)
			require.Equal(t, "http.destination_refused", class)
			require.Regexp(t, `(127\.0\.0\.1|::1) is a loopback address, which this worker reaches only when allowed`, message)
		})
	}
	for queue, allow := range policies {
		b.start(t, &worker.Config{HTTP: &worker.HTTPConfig{Queues: []string{queue}, AllowHosts: allow}})
	}
	t.Cleanup(func() {
		if !t.Failed() {
			require.Len(t, ep.got("/ok"), 4, "the endpoint got only the allowed requests")
		}
	})
}

// A request the worker signed for one endpoint is refused by another: a
// reader of the requests (a log, a proxy, a compromised endpoint) cannot
// replay it elsewhere.
func TestHTTPSignatureReplay(t *testing.T) {
	t.Parallel()
	b := setup(t)
	secret := []byte("s3cret")
	var signature string
	var body []byte
	ep := newEndpoint(t, secret, map[string]http.HandlerFunc{
		"/a": func(w http.ResponseWriter, r *http.Request) {
			signature = r.Header.Get("Geneva-Signature")
			w.WriteHeader(http.StatusOK)
		},
		"/b": reply(http.StatusOK, ""),
	})
	b.defineHTTP(t, "A", `{"steps": [{"name": "a", "http": {"url": "`+ep.URL+`/a"}}]}`)
	b.start(t, &worker.Config{HTTP: &worker.HTTPConfig{Secret: secret, AllowHosts: local}})
	id := b.create(t, "A")
	b.waitState(t, id, goclient.StateFinished)
	require.Len(t, ep.got("/a"), 1)
	require.NotEmpty(t, signature)
	body = ep.body("/a")

	replay := func(path string) int {
		req, err := http.NewRequest(http.MethodPost, ep.URL+path, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Geneva-Signature", signature)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, replay("/a"), "the same request again is the endpoint's idempotency's affair")
	require.Equal(t, http.StatusUnauthorized, replay("/b"), "replayed to another endpoint")
}

// A secret is rotated without a request refused: the worker signs with
// Secret and NextSecret (two v1s), an endpoint that checks either accepts
// the request, one that checks another refuses it.
func TestHTTPSignatureRotation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	current, next := []byte("current-secret"), []byte("next-secret")
	old := newEndpoint(t, current, map[string]http.HandlerFunc{"/ok": reply(http.StatusOK, "")})
	moved := newEndpoint(t, next, map[string]http.HandlerFunc{"/ok": reply(http.StatusOK, "")})
	other := newEndpoint(t, []byte("another-secret"), map[string]http.HandlerFunc{"/ok": reply(http.StatusOK, "")})
	b.defineHTTP(t, "Rotating", `{"steps": [{"name": "old", "http": {"url": "`+old.URL+`/ok"}},
		{"name": "moved", "http": {"url": "`+moved.URL+`/ok"}}]}`)
	b.defineHTTP(t, "Other", `{"on_exception": {"action": "pause"}, "steps": [{"name": "a", "http": {"url": "`+other.URL+`/ok"}}]}`)
	b.start(t, &worker.Config{HTTP: &worker.HTTPConfig{Secret: current, NextSecret: next, AllowHosts: local}})

	id := b.create(t, "Rotating")
	b.waitState(t, id, goclient.StateFinished)
	require.Equal(t, []string{"old: success", "moved: success"}, b.outcomes(t, id))
	id = b.create(t, "Other")
	b.waitState(t, id, goclient.StatePaused)
	class, message := b.lastError(t, id)
	require.Equal(t, "http.status.401", class)
	require.Contains(t, message, "bad signature")
}

func TestSignature(t *testing.T) {
	t.Parallel()
	current, next := []byte("current-secret"), []byte("next-secret")
	now := time.Unix(1_800_000_000, 0)
	url := "https://hooks.example.com/steps/charge?x=1"
	body := []byte(`{"execution_id": 41}`)
	both := worker.Sign(http.MethodPost, url, body, now, current, next)
	require.Regexp(t, `^t=1800000000,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$`, both)
	require.Regexp(t, `^t=1800000000,v1=[0-9a-f]{64}$`, worker.Sign(http.MethodPost, url, body, now, current))
	require.Equal(t, "t=1800000000", worker.Sign(http.MethodPost, url, body, now))

	verify := func(header, method, url string, body, secret []byte, at time.Time) bool {
		return worker.VerifySignature(header, method, url, body, secret, at, 5*time.Minute)
	}
	require.True(t, verify(both, http.MethodPost, url, body, current, now), "the current secret's endpoint")
	require.True(t, verify(both, http.MethodPost, url, body, next, now), "the next secret's endpoint")
	require.False(t, verify(both, http.MethodPost, url, body, []byte("another"), now))
	require.True(t, verify(worker.Sign(http.MethodPost, url, body, now, next), http.MethodPost, url, body, next, now), "after the rotation")
	require.False(t, verify(worker.Sign(http.MethodPost, url, body, now, next), http.MethodPost, url, body, current, now))

	// what the signature covers
	require.False(t, verify(both, http.MethodPut, url, body, current, now), "another method")
	require.False(t, verify(both, http.MethodPost, "https://hooks.example.com/steps/refund?x=1", body, current, now), "another path")
	require.False(t, verify(both, http.MethodPost, "https://hooks.example.com/steps/charge?x=2", body, current, now), "another query")
	require.False(t, verify(both, http.MethodPost, "https://evil.example/steps/charge?x=1", body, current, now), "another host")
	require.False(t, verify(both, http.MethodPost, "http://hooks.example.com/steps/charge?x=1", body, current, now), "another scheme")
	require.False(t, verify(both, http.MethodPost, url, []byte(`{"execution_id": 42}`), current, now), "another body")
	// the separators: the URL's end cannot move into the body (a URL has
	// no line break)
	require.False(t, verify(worker.Sign(http.MethodPost, "https://h.example/a", []byte(`b{}`), now, current),
		http.MethodPost, "https://h.example/ab", []byte(`{}`), current, now))

	// the time
	require.True(t, verify(both, http.MethodPost, url, body, current, now.Add(299*time.Second)))
	require.False(t, verify(both, http.MethodPost, url, body, current, now.Add(301*time.Second)), "too old")
	require.False(t, verify(both, http.MethodPost, url, body, current, now.Add(-301*time.Second)), "too new")
	v1s := strings.TrimPrefix(both, "t=1800000000,")
	require.False(t, verify(v1s, http.MethodPost, url, body, current, now), "no time")
	require.False(t, verify("t=+1800000000,"+v1s, http.MethodPost, url, body, current, now), "another spelling of the time")
	require.False(t, verify("t=1800000001,"+v1s, http.MethodPost, url, body, current, now), "another time")
	for _, garbage := range []string{"", "t=", "t=1800000000", "t=1800000000,v1=", "t=1800000000,v1=zz", "v1,t", ",,,"} {
		require.False(t, verify(garbage, http.MethodPost, url, body, current, now), garbage)
	}
	require.Equal(t, "https://hooks.example.com:8443/a%20b/c?d=e%26f", worker.SignedURL(mustURL(t, "https://hooks.example.com:8443/a%20b/c?d=e%26f#top")))
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u
}
