package politeness

// This file decides which networks a site may lead the crawler into, by a redirect or by naming
// a URL that discovery then requests: from a public address, never into a loopback, private,
// link-local, CGNAT or unspecified one.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// ErrPrivateNetwork matches every *PrivateNetworkError with errors.Is.
var ErrPrivateNetwork = errors.New("redirect or discovered URL from a public address into a private network")

// PrivateNetworkError is the error of a request refused because the site that led the crawler
// to it reached a public address and it resolved to a private one (see
// Policy.AllowPrivateRedirects): a redirect hop after a hop that reached a public address, or a
// discovered URL (see [NamedBy]) named by a document whose host reached one. Nothing was sent
// to To. errors.Is(err, context.Canceled) is true as well: the door cancelled the request before
// it left, so the host clock does not count it against the origin.
type PrivateNetworkError struct {
	URL      string     // the request refused, without userinfo
	Previous string     // the URL that redirected to it; "" for a discovered URL
	NamedBy  string     // the document that named the discovered URL; "" for a redirect hop
	From     netip.Addr // the address the previous hop (or the naming document's host) reached; invalid when unknown
	To       netip.Addr // the address the request resolved to
}

func (e *PrivateNetworkError) Error() string {
	from := "an unknown address, counted as public"
	if e.From.IsValid() {
		from = "public address " + e.From.String()
	}
	if e.NamedBy != "" {
		return fmt.Sprintf("etiquette: refused %s (private address %s), named by %s (%s): "+
			"a site must not point the crawler into a private network; set Policy.AllowPrivateRedirects if this crawl means to fetch it",
			e.URL, e.To, e.NamedBy, from)
	}
	return fmt.Sprintf("etiquette: refused the redirect from %s (%s) to %s (private address %s): "+
		"a site must not send the crawler into a private network; set Policy.AllowPrivateRedirects if this crawl means to follow it",
		e.Previous, from, e.URL, e.To)
}

type namedByKey struct{}

// NamedBy marks the requests sent with ctx as discovered: the crawl's user did not give their
// URL, the document at namedBy (a robots.txt, a sitemap, a page, an llms.txt) named it. When
// namedBy's host reached a public address, the door refuses such a request at dial time if it
// resolves to a loopback, private, link-local, CGNAT or unspecified address — as it refuses a
// redirect from a public address (Policy.AllowPrivateRedirects turns both checks off). The
// door's own robots.txt request for the URL's origin keeps the mark.
func NamedBy(ctx context.Context, namedBy string) context.Context {
	return context.WithValue(ctx, namedByKey{}, namedBy)
}

func namedByOf(ctx context.Context) (*url.URL, bool) {
	s, ok := ctx.Value(namedByKey{}).(string)
	if !ok || s == "" {
		return nil, false
	}
	u, err := url.Parse(s)
	if err != nil || u.Hostname() == "" {
		// A mark that names nothing readable counts as a public namer: the check stays on.
		return &url.URL{}, true
	}
	return u, true
}

func (e *PrivateNetworkError) Is(target error) bool {
	return target == ErrPrivateNetwork || target == context.Canceled
}

// privateAddress reports whether a is one a site on the internet must not send the crawler to:
// loopback (127.0.0.0/8, ::1), private (RFC 1918, RFC 4193 fc00::/7), link-local
// (169.254.0.0/16, fe80::/10), shared CGNAT space (RFC 6598, 100.64.0.0/10) or unspecified
// (0.0.0.0/8 — Linux connects 0.0.0.0 to the local host — and ::). IPv4-mapped IPv6 addresses
// count as their IPv4 address. The invalid address is not private.
func privateAddress(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsUnspecified() {
		return true
	}
	if a.Is4() {
		b := a.As4()
		return b[0] == 0 || b[0] == 100 && b[1]&0xc0 == 64
	}
	return false
}

// refuseHop decides a redirect hop: it is refused when the hop before it reached from, a public
// address, and it resolved to to, a private one — unless it goes through a proxy, which then
// decides what the crawler may reach. An invalid from (the previous hop was answered from the
// cache and its host cannot be resolved) counts as public. Hops within one network pass:
// loopback to loopback, private to private, public to public.
func refuseHop(from, to netip.Addr, proxied bool) bool {
	return !proxied && !privateAddress(from) && privateAddress(to)
}

// hop is what the private-network check knows of one request, carried in its context: for the
// dial of a redirect hop where it came from, and for the hop after it where it went.
type hop struct {
	redirect bool       // the request is a redirect hop
	from     netip.Addr // for a redirect: the address the hop before it reached
	reached  atomic.Pointer[netip.Addr]
}

type hopKey struct{}

// networkGuard holds what the check needs besides the request.
type networkGuard struct {
	// checked is the transport for redirect hops that left a public address: a clone of the base
	// whose dials refuse private addresses. Every connection in its pool was checked when it was
	// dialled, so reusing one is safe; the base transport's pool is never used for such a hop.
	checked http.RoundTripper
	// proxy is the base transport's: a hop it sends through a proxy is exempt.
	proxy func(*http.Request) (*url.URL, error)
	// resolve looks up the host of a previous hop that was answered from the cache, which has no
	// connection to take the address from.
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// remote is the address a connection reached.
	remote func(net.Conn) netip.Addr
	// reached holds, by lower-case host name, the address the last connection to the host
	// reached: where a document that names a URL came from. One entry per host contacted.
	reached sync.Map
}

// newNetworkGuard returns the guard for base: its checked transport is a clone of base whose
// dials refuse private addresses. With Go's dialler (customDial false) the check runs on the
// resolved address before connecting (net.Dialer.ControlContext), so DNS rebinding cannot get
// around it. A custom dialler of base (customDial true: its DialContext or Dial, and any
// DialTLSContext or DialTLS) is kept and checked on the address it connected to, before anything
// is sent.
func newNetworkGuard(base *http.Transport, customDial bool) *networkGuard {
	checked := base.Clone()
	if customDial {
		dial := checked.DialContext
		if dial == nil {
			dial = withoutContext(checked.Dial)
		}
		checked.DialContext = checkConnected(dial)
	} else {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, ControlContext: controlDial}
		checked.DialContext = d.DialContext
	}
	if checked.DialTLSContext == nil && checked.DialTLS != nil {
		checked.DialTLSContext = withoutContext(checked.DialTLS)
	}
	if checked.DialTLSContext != nil {
		checked.DialTLSContext = checkConnected(checked.DialTLSContext)
	}
	checked.Dial, checked.DialTLS = nil, nil
	return &networkGuard{
		checked: checked,
		proxy:   base.Proxy,
		resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		},
		remote: remoteAddr,
	}
}

type dialFunc = func(ctx context.Context, network, address string) (net.Conn, error)

func withoutContext(dial func(network, address string) (net.Conn, error)) dialFunc {
	return func(_ context.Context, network, address string) (net.Conn, error) { return dial(network, address) }
}

// controlDial is the checked dialler's net.Dialer.ControlContext: it runs once per address the
// dial tries, after DNS resolution and before connecting, and refuses a private one.
func controlDial(ctx context.Context, network, address string, _ syscall.RawConn) error {
	to, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("etiquette: cannot check the dial address %q: %w", address, err)
	}
	return checkHop(ctx, to.Addr())
}

// checkConnected wraps a custom dialler: a connection it made to a private address is closed
// before anything is written to it.
func checkConnected(dial dialFunc) dialFunc {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		conn, err := dial(ctx, network, address)
		if err != nil {
			return nil, err
		}
		if err := checkHop(ctx, remoteAddr(conn)); err != nil {
			conn.Close()
			return nil, err
		}
		return conn, nil
	}
}

// checkHop returns a *PrivateNetworkError when the hop in ctx may not reach to. The dial's
// context keeps the values of the request that started it.
func checkHop(ctx context.Context, to netip.Addr) error {
	var from netip.Addr
	if h, ok := ctx.Value(hopKey{}).(*hop); ok {
		from = h.from
	}
	if refuseHop(from, to, false) {
		return &PrivateNetworkError{From: from, To: to}
	}
	return nil
}

// remoteAddr is the address conn reached.
func remoteAddr(conn net.Conn) netip.Addr {
	if a, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap()
	}
	ap, _ := netip.ParseAddrPort(conn.RemoteAddr().String())
	return ap.Addr().Unmap()
}

// proxied reports whether the base transport sends req through a proxy.
func (g *networkGuard) proxied(req *http.Request) bool {
	if g.proxy == nil {
		return false
	}
	u, err := g.proxy(req)
	return err == nil && u != nil
}

// previous returns the address the request prev reached: the address literal of its URL, else
// the address its connection reached, else — it was answered from the cache — its host resolved
// now (a public address wins among several), else the invalid address, which counts as public.
func (g *networkGuard) previous(ctx context.Context, prev *http.Request) netip.Addr {
	if prev == nil {
		return netip.Addr{}
	}
	if a, ok := addressLiteral(prev.URL); ok {
		return a
	}
	if h, ok := prev.Context().Value(hopKey{}).(*hop); ok {
		if a := h.reached.Load(); a != nil {
			return *a
		}
	}
	return g.resolvedPreferPublic(ctx, prev.URL.Hostname())
}

// namer returns the address the host of a discovered URL's naming document reached: the
// address literal of its URL, else the address the last connection to its host reached, else its
// host resolved now (a public address wins among several), else the invalid address, which
// counts as public.
func (g *networkGuard) namer(ctx context.Context, u *url.URL) netip.Addr {
	if u.Hostname() == "" {
		return netip.Addr{}
	}
	if a, ok := addressLiteral(u); ok {
		return a
	}
	if a, ok := g.reached.Load(strings.ToLower(u.Hostname())); ok {
		return a.(netip.Addr)
	}
	return g.resolvedPreferPublic(ctx, u.Hostname())
}

// resolvedPreferPublic resolves host now and returns its address, a public one among several,
// or the invalid address (which counts as public) when it cannot be resolved.
func (g *networkGuard) resolvedPreferPublic(ctx context.Context, host string) netip.Addr {
	addrs, err := g.resolve(ctx, host)
	if err != nil || len(addrs) == 0 {
		return netip.Addr{}
	}
	for _, a := range addrs {
		if !privateAddress(a) {
			return a
		}
	}
	return addrs[0]
}

// guardPrivateNetworks is the bottom of the door. It sends a redirect hop (a request with
// Response set) that left a public address — the one the hop before it reached, see previous —
// through g.checked, whose dials refuse private addresses (refuseHop), unless a proxy carries it.
// A discovered request (marked with NamedBy) whose naming document's host reached a public
// address (see namer) goes the same way. A refused request fails with a *PrivateNetworkError
// and is a Refused event on sink (reason "private-network").
//
// So that a redirect knows where it came from, the layer records the address each request's
// connection reached (httptrace GotConn) in the request's context, which the response's Request
// keeps. A request to an address literal needs no record: its address is in its URL.
func guardPrivateNetworks(next http.RoundTripper, g *networkGuard, sink events.Sink) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		redirect := req.Response != nil
		namer, discovered := namedByOf(req.Context())
		var from netip.Addr
		to, checked := next, false
		if redirect || discovered {
			if redirect {
				from = g.previous(req.Context(), req.Response.Request)
			} else {
				from = g.namer(req.Context(), namer)
			}
			if !privateAddress(from) && !g.proxied(req) {
				to, checked = g.checked, true
			}
		}
		_, literal := addressLiteral(req.URL)
		if !checked && literal {
			return next.RoundTrip(req)
		}
		h := &hop{redirect: redirect, from: from}
		ctx := context.WithValue(req.Context(), hopKey{}, h)
		if !literal {
			ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
				GotConn: func(info httptrace.GotConnInfo) {
					a := g.remote(info.Conn)
					h.reached.Store(&a)
					g.reached.Store(strings.ToLower(req.URL.Hostname()), a)
				},
			})
		}
		resp, err := to.RoundTrip(req.WithContext(ctx))
		var refused *PrivateNetworkError
		if err == nil || !errors.As(err, &refused) {
			return resp, err
		}
		refused = &PrivateNetworkError{URL: req.URL.Redacted(), From: refused.From, To: refused.To}
		switch {
		case redirect && req.Response.Request != nil:
			refused.Previous = req.Response.Request.URL.Redacted()
		case !redirect:
			refused.NamedBy = cmp.Or(namer.Redacted(), "a discovery document")
		}
		budget, _ := origin.BudgetKey(req.URL)
		sink.Emit(events.Event{Type: events.Refused, URL: req.URL.String(), Origin: budget, Kind: kind.FromContext(req.Context()),
			Method: req.Method, Reason: "private-network", Detail: refused.Error(), Err: refused})
		return nil, refused
	})
}

// refuseNamedPrivate is the early half of the check for discovered URLs, above the robots gate:
// a discovered request (NamedBy) whose URL is a private address literal, named by a document on
// a public address (see namer), is refused before anything — its origin's robots.txt included —
// is requested, with a *PrivateNetworkError and a Refused event on sink (reason
// "private-network"). A host name is left to guardPrivateNetworks, which checks the address the
// dial resolved; so are redirect hops and requests a proxy carries.
func refuseNamedPrivate(next http.RoundTripper, g *networkGuard, sink events.Sink) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		namer, discovered := namedByOf(req.Context())
		if !discovered || req.Response != nil {
			return next.RoundTrip(req)
		}
		to, literal := addressLiteral(req.URL)
		if !literal || !privateAddress(to) || g.proxied(req) {
			return next.RoundTrip(req)
		}
		from := g.namer(req.Context(), namer)
		if privateAddress(from) {
			return next.RoundTrip(req)
		}
		refused := &PrivateNetworkError{URL: req.URL.Redacted(), NamedBy: cmp.Or(namer.Redacted(), "a discovery document"), From: from, To: to}
		budget, _ := origin.BudgetKey(req.URL)
		sink.Emit(events.Event{Type: events.Refused, URL: req.URL.String(), Origin: budget, Kind: kind.FromContext(req.Context()),
			Method: req.Method, Reason: "private-network", Detail: refused.Error(), Err: refused})
		return nil, refused
	})
}

// addressLiteral returns the address u's host names, if it is an IP address rather than a name.
func addressLiteral(u *url.URL) (netip.Addr, bool) {
	host := u.Hostname()
	if host == "" || !strings.Contains(host, ":") && (host[0] < '0' || host[0] > '9') {
		// Not an address: spares the name the parser's error, which allocates, on every request.
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(host)
	return a.Unmap(), err == nil
}
