package worker

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRefusedKind(t *testing.T) {
	t.Parallel()
	for addr, kind := range map[string]string{
		"127.0.0.1":             "loopback",
		"127.255.0.9":           "loopback",
		"::1":                   "loopback",
		"::ffff:127.0.0.1":      "loopback",   // IPv4-mapped
		"169.254.169.254":       "link-local", // the cloud's metadata service
		"fe80::1%eth0":          "link-local",
		"ff02::1":               "link-local",
		"10.1.2.3":              "private",
		"172.16.0.1":            "private",
		"172.31.255.255":        "private",
		"192.168.1.1":           "private",
		"fc00::1":               "private",
		"fd12:3456::1":          "private",
		"fec0::1":               "private",
		"100.64.0.1":            "shared (carrier-grade NAT)",
		"0.0.0.0":               "unspecified",
		"0.1.2.3":               "unspecified",
		"::":                    "unspecified",
		"224.0.0.1":             "link-local", // (link-local multicast)
		"239.1.2.3":             "multicast",
		"ff0e::1":               "multicast",
		"255.255.255.255":       "reserved",
		"240.0.0.1":             "reserved",
		"198.18.0.1":            "reserved",
		"192.0.0.8":             "reserved",
		"::7f00:1":              "reserved",   // IPv4-compatible
		"64:ff9b::a00:1":        "private",    // NAT64 of 10.0.0.1
		"64:ff9b::a9fe:a9fe":    "link-local", // NAT64 of 169.254.169.254
		"2002:7f00:1::1":        "loopback",   // 6to4 of 127.0.0.1
		"64:ff9b:1::1":          "private",
		"8.8.8.8":               "",
		"1.1.1.1":               "",
		"172.32.0.1":            "",
		"100.128.0.1":           "",
		"2606:4700:4700::1111":  "",
		"64:ff9b::808:808":      "", // NAT64 of 8.8.8.8
		"2002:808:808::1":       "",
		"::ffff:93.184.215.14":  "",
		"2a00:1450:4001:80b::1": "",
	} {
		require.Equal(t, kind, refusedKind(netip.MustParseAddr(addr)), addr)
	}
}

func TestDestinations(t *testing.T) {
	t.Parallel()
	d, err := newDestinations([]string{"hooks.internal", "Metrics.Example.COM.", "10.1.0.0/16", "192.168.1.7", "[fd00::1]", " ::1 "})
	require.NoError(t, err)
	for host, allowed := range map[string]bool{
		"hooks.internal": true, "HOOKS.internal.": true, "metrics.example.com": true,
		"a.hooks.internal": false, "hooks.internal.evil.example": false, "10.1.0.1": false,
	} {
		require.Equal(t, allowed, d.allowsName(host), host)
	}
	for addr, allowed := range map[string]bool{
		"10.1.200.3": true, "10.2.0.1": false, "192.168.1.7": true, "192.168.1.8": false,
		"fd00::1": true, "fd00::2": false, "::1": true, "127.0.0.1": false, "::ffff:10.1.0.5": true,
		"169.254.169.254": false, "8.8.8.8": true,
	} {
		err := d.check(netip.MustParseAddr(addr))
		if allowed {
			require.NoError(t, err, addr)
		} else {
			require.ErrorIs(t, err, errDestinationRefused, addr)
			require.ErrorContains(t, err, addr+" is a ", addr)
		}
	}

	any, err := newDestinations([]string{"*"})
	require.NoError(t, err)
	require.True(t, any.allowsName("anything.example"))
	require.NoError(t, any.check(netip.MustParseAddr("169.254.169.254")))

	for _, bad := range []string{"http://hooks.internal", "hooks.internal:8080", "a b", "10.0.0.0/33", "-x.example", "", "*.example.com"} {
		_, err := newDestinations([]string{bad})
		require.ErrorContains(t, err, "HTTPConfig.AllowHosts", bad)
	}
}

// The transport checks the address it connects to, after DNS: a name that
// resolves to a refused address is refused unless the name is allowed; no
// connection is made.
func TestDestinationsTransport(t *testing.T) {
	t.Parallel()
	var requests int
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { requests++ }))
	t.Cleanup(server.Close)
	port := server.URL[strings.LastIndex(server.URL, ":"):]

	get := func(allow []string, host string) error {
		d, err := newDestinations(allow)
		require.NoError(t, err)
		transport, err := d.transport(nil)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+port+"/", nil)
		require.NoError(t, err)
		resp, err := (&http.Client{Transport: transport}).Do(req)
		if err == nil {
			require.NoError(t, resp.Body.Close())
		}
		return err
	}
	for _, host := range []string{"127.0.0.1", "localhost", "[::1]"} {
		err := get(nil, host)
		require.ErrorIs(t, err, errDestinationRefused, host)
		require.ErrorContains(t, err, "is a loopback address", host)
	}
	require.ErrorIs(t, get([]string{"localhost"}, "127.0.0.1"), errDestinationRefused)
	require.Zero(t, requests)
	require.NoError(t, get([]string{"127.0.0.1"}, "127.0.0.1"))
	require.NoError(t, get([]string{"127.0.0.0/8"}, "127.0.0.1"))
	require.NoError(t, get([]string{"localhost"}, "localhost"))
	require.NoError(t, get([]string{"*"}, "127.0.0.1"))
	require.Equal(t, 4, requests)

	// a transport the worker cannot check the connections of, unless every
	// destination is allowed
	d, err := newDestinations(nil)
	require.NoError(t, err)
	_, err = d.transport(roundTripper(func(*http.Request) (*http.Response, error) { return nil, errors.New("no") }))
	require.ErrorContains(t, err, "HTTPConfig.Client's Transport is a worker.roundTripper")
	_, err = d.transport(&http.Transport{DialTLSContext: (&tls.Dialer{}).DialContext})
	require.ErrorContains(t, err, "dials TLS with a function of its own")
	proxied := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: "proxy.internal:3128"})}
	checked, err := d.transport(proxied)
	require.NoError(t, err)
	require.NotSame(t, proxied, checked, "a copy")
	require.NotNil(t, checked.(*http.Transport).Proxy, "keeping its proxy")
	all, err := newDestinations([]string{"*"})
	require.NoError(t, err)
	_, err = all.transport(roundTripper(nil))
	require.NoError(t, err)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
