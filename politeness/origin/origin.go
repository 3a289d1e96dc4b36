// Package origin turns URLs into the keys per-origin state is kept under.
//
// Two keys, because two rules apply:
//   - [RobotsKey]: scheme, host and port. RFC 9309 §2.3 scopes robots.txt to the protocol, host and
//     port it was fetched from.
//   - [BudgetKey]: host and port, with each scheme's default port folded away, so http://h and
//     https://h share one request budget: they are one server to the operator who pays for it.
//
// Hosts are lower-cased and IDNA-encoded (punycode) first, so "Bücher.example" and
// "xn--bcher-kva.example" are one origin.
package origin

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// ErrNoHost is returned for a URL without a host, or with a scheme other than http and https.
var ErrNoHost = errors.New("origin: URL has no http(s) host")

// Host returns u's host lower-cased and IDNA-encoded, without the port.
func Host(u *url.URL) (string, error) {
	if u == nil || u.Hostname() == "" {
		return "", ErrNoHost
	}
	h := strings.ToLower(u.Hostname())
	if isASCII(h) && !strings.Contains(h, "xn--") {
		// IDNA's lookup mapping leaves a lower-case ASCII host without punycode labels as it is,
		// or rejects it (and a rejected host is keyed as it is, below), so the common case skips
		// it: it runs for every request.
		return h, nil
	}
	a, err := idna.Lookup.ToASCII(h)
	if err != nil || a == "" {
		// A host that IDNA rejects is still a host a server may answer to; key it lower-cased as is
		// rather than refusing the request here (the transport will report a bad host itself).
		return h, nil
	}
	return a, nil
}

// canonicalHost reports whether hostport, a URL's Host with a port, is already the budget key's
// form: a host name before the port, lower-case ASCII without punycode labels (which Host
// leaves as they are) and not an IPv6 literal (whose brackets hostPort adds back).
func canonicalHost(hostport string) bool {
	if hostport == "" || hostport[0] == '[' || hostport[0] == ':' || strings.Contains(hostport, "xn--") {
		return false
	}
	for i := 0; i < len(hostport); i++ {
		if c := hostport[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func schemePort(u *url.URL) (scheme, port string, err error) {
	if u == nil {
		return "", "", ErrNoHost
	}
	scheme = strings.ToLower(u.Scheme)
	switch scheme {
	case "http":
		port = "80"
	case "https":
		port = "443"
	default:
		return "", "", fmt.Errorf("%w: %q", ErrNoHost, u.String())
	}
	if p := u.Port(); p != "" {
		port = p
	}
	return scheme, port, nil
}

func hostPort(host, port string, defaultPort bool) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if defaultPort {
		return host
	}
	return host + ":" + port
}

// RobotsKey returns "scheme://host[:port]" for u, the port omitted when it is the scheme's default.
func RobotsKey(u *url.URL) (string, error) {
	scheme, port, err := schemePort(u)
	if err != nil {
		return "", err
	}
	host, err := Host(u)
	if err != nil {
		return "", err
	}
	def := (scheme == "http" && port == "80") || (scheme == "https" && port == "443")
	if !def && canonicalHost(u.Host) {
		return scheme + "://" + u.Host, nil // one concatenation instead of two, as in BudgetKey
	}
	return scheme + "://" + hostPort(host, port, def), nil
}

// BudgetKey returns "host" or "host:port" for u: the default ports 80 and 443 are folded away, so
// http and https of one host share a key; any other port is kept.
func BudgetKey(u *url.URL) (string, error) {
	_, port, err := schemePort(u)
	if err != nil {
		return "", err
	}
	if port != "80" && port != "443" && canonicalHost(u.Host) {
		// The key would be host + ":" + port rebuilt from u.Host itself: keep u.Host, and the
		// allocation of its copy, which every request to a non-default port would cost.
		return u.Host, nil
	}
	host, err := Host(u)
	if err != nil {
		return "", err
	}
	return hostPort(host, port, port == "80" || port == "443"), nil
}
