package worker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// The destination policy of HTTP steps (HTTPConfig.AllowHosts): a worker
// that runs them is an HTTP client at its own network position, so an
// endpoint a definition names (an operator's, or whoever may define types)
// could otherwise be the worker's loopback, the cloud's metadata service or
// a private network's hosts. The check is in the dialer, on the address
// connected to after DNS, at every connection (a redirect's included), so a
// name that resolves to one address when looked up and another when
// connected (DNS rebinding) cannot slip past it.

// errDestinationRefused is a connection the policy refused.
var errDestinationRefused = errors.New("destination refused")

// refusedRanges are the addresses refused unless allowed, besides those
// netip names (loopback, link-local, private, multicast, unspecified), each
// with what it is.
var refusedRanges = []struct {
	prefix netip.Prefix
	kind   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"}, // "this network": 0.x reaches the host itself
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"}, // and the broadcast address
	{netip.MustParsePrefix("::/96"), "reserved"},       // IPv4-compatible
	{netip.MustParsePrefix("fec0::/10"), "private"},    // site-local
	{netip.MustParsePrefix("64:ff9b:1::/48"), "private"},
}

// embeddingRanges are IPv6 ranges that carry an IPv4 address (NAT64, 6to4),
// and the bit where it starts: the IPv4 address is checked.
var embeddingRanges = []struct {
	prefix netip.Prefix
	at     int
}{
	{netip.MustParsePrefix("64:ff9b::/96"), 12},
	{netip.MustParsePrefix("2002::/16"), 2},
}

// refusedKind says why an address is refused unless allowed ("loopback",
// "private", …), or "" for a public one.
func refusedKind(ip netip.Addr) string {
	ip = ip.WithZone("").Unmap()
	switch {
	case ip.IsLoopback():
		return "loopback"
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		return "link-local"
	case ip.IsPrivate():
		return "private"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsMulticast():
		return "multicast"
	}
	for _, r := range refusedRanges {
		if r.prefix.Contains(ip) {
			return r.kind
		}
	}
	for _, r := range embeddingRanges {
		if r.prefix.Contains(ip) {
			b := ip.As16()
			if kind := refusedKind(netip.AddrFrom4([4]byte(b[r.at : r.at+4]))); kind != "" {
				return kind
			}
		}
	}
	return ""
}

// destinations is a worker's policy: the names and address ranges allowed
// besides the public addresses, or any destination.
type destinations struct {
	any    bool
	names  map[string]bool
	ranges []netip.Prefix
}

// newDestinations reads HTTPConfig.AllowHosts: host names, addresses, CIDR
// blocks, or "*".
func newDestinations(allow []string) (*destinations, error) {
	d := &destinations{names: map[string]bool{}}
	for _, entry := range allow {
		entry = strings.TrimSpace(entry)
		if entry == "*" {
			d.any = true
			continue
		}
		if prefix, err := netip.ParsePrefix(entry); err == nil {
			d.ranges = append(d.ranges, prefix.Masked())
			continue
		}
		if ip, err := netip.ParseAddr(strings.Trim(entry, "[]")); err == nil {
			ip = ip.WithZone("").Unmap()
			d.ranges = append(d.ranges, netip.PrefixFrom(ip, ip.BitLen()))
			continue
		}
		name := hostName(entry)
		if !validHostName(name) {
			return nil, fmt.Errorf(`geneva: the allowed hosts (HTTPConfig.AllowHosts, geneva worker --allow-hosts): `+
				`%q is not a host name, an IP address, a CIDR block or "*"`, entry)
		}
		d.names[name] = true
	}
	return d, nil
}

// hostName is a host as names are compared: lowercase, without the root's
// dot.
func hostName(host string) string {
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

// validHostName tells whether name is a DNS name (letters, digits, hyphens
// and underscores, in dot-separated labels).
func validHostName(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || len(label) > 63 || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") ||
			strings.Trim(label, "abcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
			return false
		}
	}
	return true
}

// allowsName tells whether host is an allowed name, which may resolve to any
// address.
func (d *destinations) allowsName(host string) bool {
	return d.any || d.names[hostName(host)]
}

// check returns an error wrapping errDestinationRefused when ip is refused.
func (d *destinations) check(ip netip.Addr) error {
	if d.any {
		return nil
	}
	kind := refusedKind(ip)
	if kind == "" {
		return nil
	}
	plain := ip.WithZone("").Unmap()
	for _, r := range d.ranges {
		if r.Contains(plain) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s is a %s address, which this worker reaches only when allowed "+
		"(HTTPConfig.AllowHosts; geneva worker --allow-hosts or GENEVA_HTTP_ALLOW_HOSTS)", errDestinationRefused, ip, kind)
}

// control is a net.Dialer's Control: it checks the address about to be
// connected to (an IP address and port: DNS is done).
func (d *destinations) control(network, address string, _ syscall.RawConn) error {
	addrPort, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s is not an IP address and port", errDestinationRefused, address)
	}
	return d.check(addrPort.Addr())
}

// transport returns a copy of base (an *http.Transport, or nil for
// http.DefaultTransport) whose dialer, the worker's own, checks every
// connection; any RoundTripper as it is when every destination is allowed.
func (d *destinations) transport(base http.RoundTripper) (http.RoundTripper, error) {
	if base == nil {
		base = http.DefaultTransport
	}
	if d.any {
		return base, nil
	}
	t, ok := base.(*http.Transport)
	if !ok {
		return nil, fmt.Errorf(`geneva: HTTPConfig.Client's Transport is a %T, whose connections the worker cannot check `+
			`(HTTPConfig.AllowHosts): give an *http.Transport, and wrap it with HTTPConfig.WrapTransport (to trace the requests), `+
			`or allow every destination ("*")`, base)
	}
	//nolint:staticcheck // DialTLS is deprecated, but a caller's transport may still set it
	if t.DialTLSContext != nil || t.DialTLS != nil {
		return nil, errors.New(`geneva: HTTPConfig.Client's Transport dials TLS with a function of its own, whose connections ` +
			`the worker cannot check (HTTPConfig.AllowHosts): give its TLS settings in TLSClientConfig, or allow every destination ("*")`)
	}
	// its dial function replaced: http.DefaultTransport's dialer, checking
	// each address
	t = t.Clone()
	t.Dial = nil //nolint:staticcheck // (deprecated, but a caller's transport may still set it)
	plain := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	checked := *plain
	checked.Control = d.control
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, _, err := net.SplitHostPort(addr); err == nil && d.allowsName(host) {
			return plain.DialContext(ctx, network, addr)
		}
		return checked.DialContext(ctx, network, addr)
	}
	return t, nil
}
