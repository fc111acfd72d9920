package worker_test

import (
	"net/http"
	"strings"
	"testing"

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
