package politeness

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/politecrawl/etiquette/politeness/events"
)

func TestPrivateAddress(t *testing.T) {
	tests := []struct {
		addr    string
		private bool
	}{
		{"127.0.0.1", true}, {"127.8.9.10", true}, {"::1", true}, // loopback
		{"10.1.2.3", true}, {"172.16.0.1", true}, {"172.31.255.255", true}, {"192.168.0.1", true}, // RFC 1918
		{"fd12:3456::1", true}, {"fc00::1", true}, // RFC 4193
		{"169.254.169.254", true}, {"fe80::1", true}, // link-local, the cloud metadata address included
		{"100.64.0.1", true}, {"100.127.255.255", true}, // CGNAT (RFC 6598)
		{"0.0.0.0", true}, {"0.1.2.3", true}, {"::", true}, // unspecified
		{"::ffff:10.0.0.1", true}, {"::ffff:127.0.0.1", true}, // IPv4-mapped
		{"93.184.216.34", false}, {"8.8.8.8", false}, {"172.32.0.1", false}, {"100.128.0.1", false},
		{"100.63.255.255", false}, {"2606:2800:220:1::1", false}, {"::ffff:8.8.8.8", false},
	}
	for _, tt := range tests {
		if got := privateAddress(netip.MustParseAddr(tt.addr)); got != tt.private {
			t.Errorf("privateAddress(%s) = %v, want %v", tt.addr, got, tt.private)
		}
	}
	if privateAddress(netip.Addr{}) {
		t.Error("the invalid address counts as private")
	}
}

func TestRefuseHop(t *testing.T) {
	public, other := netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("8.8.8.8")
	tests := []struct {
		name     string
		from, to netip.Addr
		proxied  bool
		refuse   bool
	}{
		{"public to private", public, netip.MustParseAddr("10.0.0.1"), false, true},
		{"public to loopback", public, netip.MustParseAddr("127.0.0.1"), false, true},
		{"public to the metadata address", public, netip.MustParseAddr("169.254.169.254"), false, true},
		{"public to CGNAT", public, netip.MustParseAddr("100.64.1.1"), false, true},
		{"public to IPv6 ULA", public, netip.MustParseAddr("fd00::1"), false, true},
		{"unknown (counted as public) to private", netip.Addr{}, netip.MustParseAddr("192.168.1.1"), false, true},
		{"public to public", public, other, false, false},
		{"private to private", netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("10.0.0.1"), false, false},
		{"private to another private network", netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("192.168.1.1"), false, false},
		{"loopback to loopback", netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.1"), false, false},
		{"private to public", netip.MustParseAddr("10.0.0.2"), public, false, false},
		{"public to private through a proxy", public, netip.MustParseAddr("10.0.0.1"), true, false},
	}
	for _, tt := range tests {
		if got := refuseHop(tt.from, tt.to, tt.proxied); got != tt.refuse {
			t.Errorf("%s: refuseHop = %v, want %v", tt.name, got, tt.refuse)
		}
	}
}

// The dial hook decides on the address DNS resolved to, before a connection is attempted: it is
// called here directly, so nothing is dialled.
func TestControlDialRefusesPrivateAddressesAfterAPublicHop(t *testing.T) {
	fromPublic := context.WithValue(context.Background(), hopKey{}, &hop{redirect: true, from: netip.MustParseAddr("93.184.216.34")})
	fromPrivate := context.WithValue(context.Background(), hopKey{}, &hop{redirect: true, from: netip.MustParseAddr("10.0.0.2")})
	tests := []struct {
		ctx     context.Context
		address string
		refuse  bool
	}{
		{fromPublic, "10.0.0.1:80", true},
		{fromPublic, "127.0.0.1:8080", true},
		{fromPublic, "[::1]:443", true},
		{fromPublic, "[::ffff:192.168.1.1]:80", true},
		{fromPublic, "93.184.216.35:443", false},
		{fromPrivate, "10.0.0.1:80", false},
		{context.Background(), "10.0.0.1:80", true}, // no record: the checked dialler refuses
		{fromPublic, "not-an-address", true},
	}
	for _, tt := range tests {
		err := controlDial(tt.ctx, "tcp", tt.address, nil)
		if (err != nil) != tt.refuse {
			t.Errorf("controlDial(%s) = %v, want refused %v", tt.address, err, tt.refuse)
		}
		if tt.refuse && strings.Contains(tt.address, ":") && tt.address != "not-an-address" && !errors.Is(err, ErrPrivateNetwork) {
			t.Errorf("controlDial(%s) = %v, want a *PrivateNetworkError", tt.address, err)
		}
	}
}

// A custom dialler's connection is checked on the address it reached and closed unused.
func TestCheckConnectedClosesAPrivateConnection(t *testing.T) {
	fromPublic := context.WithValue(context.Background(), hopKey{}, &hop{redirect: true, from: netip.MustParseAddr("93.184.216.34")})
	for _, tt := range []struct {
		remote string
		refuse bool
	}{{"10.0.0.1:80", true}, {"93.184.216.35:80", false}} {
		conn := &fakeConn{remote: net.TCPAddrFromAddrPort(netip.MustParseAddrPort(tt.remote))}
		dial := checkConnected(func(context.Context, string, string) (net.Conn, error) { return conn, nil })
		got, err := dial(fromPublic, "tcp", "example.org:80")
		if tt.refuse != (err != nil) || tt.refuse != conn.closed.Load() || !tt.refuse && got != net.Conn(conn) {
			t.Errorf("%s: conn %v, err %v, closed %v; want refused %v", tt.remote, got, err, conn.closed.Load(), tt.refuse)
		}
	}
}

type fakeConn struct {
	net.Conn
	remote net.Addr
	closed atomic.Bool
}

func (c *fakeConn) RemoteAddr() net.Addr { return c.remote }
func (c *fakeConn) Close() error         { c.closed.Store(true); return nil }

// A previous hop answered from the cache has no connection: its host is resolved instead, and
// counts as public when any of its addresses is, or when it cannot be resolved.
func TestPreviousHopAddress(t *testing.T) {
	g := &networkGuard{resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "intranet.example":
			return []netip.Addr{netip.MustParseAddr("10.0.0.5")}, nil
		case "mixed.example":
			return []netip.Addr{netip.MustParseAddr("10.0.0.5"), netip.MustParseAddr("93.184.216.34")}, nil
		}
		return nil, errors.New("no such host")
	}}
	reached := &hop{}
	a := netip.MustParseAddr("127.0.0.1")
	reached.reached.Store(&a)
	prev := func(rawURL string, h *hop) *http.Request {
		req, _ := http.NewRequest(http.MethodGet, rawURL, nil)
		if h != nil {
			req = req.WithContext(context.WithValue(req.Context(), hopKey{}, h))
		}
		return req
	}
	tests := []struct {
		name string
		prev *http.Request
		want string // "" for the invalid address
	}{
		{"from its connection", prev("http://anything.example/", reached), "127.0.0.1"},
		{"an address literal", prev("http://192.168.1.9:8080/", &hop{}), "192.168.1.9"},
		{"an address literal wins over the connection (a proxy's)", prev("http://8.8.8.8/", reached), "8.8.8.8"},
		{"a name, resolved", prev("http://intranet.example/", &hop{}), "10.0.0.5"},
		{"a name with a public address", prev("http://mixed.example/", nil), "93.184.216.34"},
		{"a name that does not resolve", prev("http://gone.example/", nil), ""},
		{"no previous request", nil, ""},
	}
	for _, tt := range tests {
		got := g.previous(context.Background(), tt.prev)
		if tt.want == "" && got.IsValid() || tt.want != "" && got != netip.MustParseAddr(tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, got, tt.want)
		}
	}
}

// Every connection here is to loopback. The site redirecting is made to look public by the
// guard's remote-address function; the hop to the loopback site must then never be sent, while
// loopback-to-loopback hops and hops through a proxy go ahead.
func TestPrivateRedirectGuard(t *testing.T) {
	var inner atomic.Int32
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.Add(1)
		io.WriteString(w, "internal")
	}))
	defer internal.Close()
	internalURL, _ := url.Parse(internal.URL)
	_, internalPort, _ := net.SplitHostPort(internalURL.Host)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}))
	defer redirector.Close()
	publicPort := redirector.Listener.Addr().(*net.TCPAddr).Port
	sameNetwork := httptest.NewServer(redirector.Config.Handler) // a redirector that stays loopback
	defer sameNetwork.Close()
	var proxied atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		io.WriteString(w, "via proxy")
	}))
	defer proxy.Close()

	client := func(viaProxy, customDial bool) (*http.Client, *eventLog) {
		plain := http.DefaultTransport.(*http.Transport).Clone()
		if customDial {
			plain.DialContext = (&net.Dialer{}).DialContext
		}
		g := newNetworkGuard(plain, customDial)
		g.remote = func(conn net.Conn) netip.Addr {
			if a := conn.RemoteAddr().(*net.TCPAddr); a.Port == publicPort {
				return netip.MustParseAddr("93.184.216.34") // the redirector plays a site on the internet
			}
			return remoteAddr(conn)
		}
		if viaProxy {
			u, _ := url.Parse(proxy.URL)
			g.proxy = func(req *http.Request) (*url.URL, error) {
				if req.URL.Port() == internalPort {
					return u, nil
				}
				return nil, nil
			}
			plain.Proxy = g.proxy
		}
		sink := &eventLog{}
		return &http.Client{Transport: guardPrivateNetworks(plain, g, sink)}, sink
	}
	// The redirector is asked by name, so that the address its connection reached is what counts.
	to := func(target string) string {
		return "http://localhost:" + strconv.Itoa(publicPort) + "/?to=" + url.QueryEscape(target)
	}
	localhost := "http://localhost:" + internalPort + "/by-name"

	tests := []struct {
		name                 string
		url                  string
		viaProxy, customDial bool
		wantRefused          bool
	}{
		{name: "public to loopback", url: to(internal.URL + "/a"), wantRefused: true},
		{name: "public to a name that resolves to loopback", url: to(localhost), wantRefused: true},
		{name: "public to loopback with a custom dialler", url: to(internal.URL + "/b"), customDial: true, wantRefused: true},
		{name: "public to loopback through a proxy", url: to(internal.URL + "/c"), viaProxy: true},
		{name: "loopback to loopback", url: sameNetwork.URL + "/?to=" + url.QueryEscape(internal.URL+"/d")},
		{name: "loopback to a name that resolves to loopback", url: sameNetwork.URL + "/?to=" + url.QueryEscape(localhost)},
		{name: "the caller's own private URL", url: localhost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, sink := client(tt.viaProxy, tt.customDial)
			before, beforeProxy := inner.Load(), proxied.Load()
			resp, err := c.Get(tt.url)
			if err == nil {
				resp.Body.Close()
			}
			reached := inner.Load() > before || proxied.Load() > beforeProxy
			refused := sink.of(events.Refused)
			if !tt.wantRefused {
				if err != nil || !reached || len(refused) != 0 {
					t.Errorf("err %v, reached %v, refusals %v; want it fetched", err, reached, refused)
				}
				return
			}
			if reached {
				t.Error("the private site received the request")
			}
			var pne *PrivateNetworkError
			if !errors.As(err, &pne) || !errors.Is(err, context.Canceled) || !pne.To.IsLoopback() || pne.From != netip.MustParseAddr("93.184.216.34") {
				t.Errorf("err %v, want a *PrivateNetworkError from the public address to loopback", err)
			}
			if len(refused) != 1 || refused[0].Reason != "private-network" || !strings.Contains(refused[0].Detail, "AllowPrivateRedirects") {
				t.Errorf("events %v, want one Refused (private-network) that says how to allow it", refused)
			}
		})
	}
}

// A URL's host is an address only when it is an IP literal; a name, even one starting with a
// digit, is resolved by the dial and checked there.
func TestAddressLiteral(t *testing.T) {
	for _, tt := range []struct {
		url  string
		want string // "" when the host is a name
	}{
		{"http://127.0.0.1:8080/", "127.0.0.1"},
		{"http://[::1]/", "::1"},
		{"http://[::ffff:10.0.0.1]/", "10.0.0.1"},
		{"https://example.org/", ""},
		{"https://1password.example/", ""},
		{"https://a:b@10.1.2.3/", "10.1.2.3"},
	} {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if a, ok := addressLiteral(u); ok {
			got = a.String()
		}
		if got != tt.want {
			t.Errorf("addressLiteral(%s) = %q, want %q", tt.url, got, tt.want)
		}
	}
}

// A discovered URL (NamedBy) is checked like a redirect hop, the naming document in place of the
// hop before: from a public site, an address literal in a private network is refused before
// anything is sent, a name that resolves into one at dial time; from a private site, or through
// a proxy, it goes ahead.
func TestDiscoveredURLsOfAPublicSiteStayOutOfPrivateNetworks(t *testing.T) {
	var inner atomic.Int32
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.Add(1)
		io.WriteString(w, "internal")
	}))
	defer internal.Close()
	internalURL, _ := url.Parse(internal.URL)
	_, internalPort, _ := net.SplitHostPort(internalURL.Host)

	g := newNetworkGuard(http.DefaultTransport.(*http.Transport).Clone(), false)
	g.resolve = func(_ context.Context, host string) ([]netip.Addr, error) {
		if host == "public.example" {
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
		}
		return nil, errors.New("no such host")
	}
	sink := &eventLog{}
	plain := http.DefaultTransport.(*http.Transport).Clone()
	client := &http.Client{Transport: refuseNamedPrivate(guardPrivateNetworks(plain, g, sink), g, sink)}
	get := func(namedBy, target string) error {
		req, _ := http.NewRequestWithContext(NamedBy(context.Background(), namedBy), http.MethodGet, target, nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}

	for _, tt := range []struct {
		name, namedBy, target string
		wantRefused           bool
	}{
		{"a public site names a loopback address", "http://public.example/robots.txt", internal.URL + "/a", true},
		{"a public site names a name that resolves to loopback", "http://public.example/robots.txt", "http://localhost:" + internalPort + "/b", true},
		{"a public site named by an unknown host, counted as public", "http://gone.example/", internal.URL + "/c", true},
		{"a loopback site names a loopback address", internal.URL + "/robots.txt", internal.URL + "/d", false},
	} {
		before := inner.Load()
		refusedBefore := len(sink.of(events.Refused))
		err := get(tt.namedBy, tt.target)
		reached := inner.Load() > before
		var pne *PrivateNetworkError
		if !tt.wantRefused {
			if err != nil || !reached {
				t.Errorf("%s: err %v, reached %v; want it fetched", tt.name, err, reached)
			}
			continue
		}
		refused := sink.of(events.Refused)
		if reached || !errors.As(err, &pne) || pne.NamedBy != tt.namedBy || !strings.Contains(err.Error(), "named by") ||
			len(refused) != refusedBefore+1 || refused[len(refused)-1].Reason != "private-network" {
			t.Errorf("%s: err %v, reached %v, refusals %v; want refused before anything reached the private site, one private-network event", tt.name, err, reached, refused[refusedBefore:])
		}
	}
}
