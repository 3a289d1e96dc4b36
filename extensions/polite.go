// Package extensions plugs etiquette into a Colly collector, in Colly's own extension style:
// one function per concern, func X(c *colly.Collector, …).
//
// Most scrapers need one line:
//
//	if err := extensions.Polite(c, politeness.Policy{Identity: id}); err != nil { … }
//
// Every setting is a field of politeness.Policy (the identity comes from package
// politeness/identity). The other functions: [Install] is Polite that also returns the door, for
// its events and stats; [Status] tells whether the collector still sends through it; [Kind]
// marks a collector's requests (a sitemap reader, a feed reader); [Discover] seeds a collector
// with what a site publishes for machines (sitemaps, llms.txt, feeds; see discovery/plan) and
// [FoundVia] tells a request where its URL was found; [UserTriggered] sets up a collector that
// fetches a page because one person asked. Package report turns the door's events into a
// report; package etiquettetest checks a scraper against a recording site in its tests.
package extensions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/etiquette/internal/quietlog"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/events"
)

// ErrDoorBypassed is the error of every request a collector would have sent after a Colly setter
// replaced or weakened the door (SetProxy, SetProxyFunc, SetClient, WithTransport,
// SetRequestTimeout, or a direct change of the collector's client). errors.Is(err,
// context.Canceled) is true as well: the request was cancelled before it left.
var ErrDoorBypassed = errors.New("etiquette: the collector's transport is no longer the polite door")

// Polite installs the one door as c's transport: every request c and its clones send — pages,
// redirect hops, retries — is identified, robots-checked, cookie-free unless a purpose needs
// cookies, cached and budgeted. A Policy naming only its Identity gets the defaults: 3 request
// starts per second per host, 2 in flight, robots.txt for the identity's crawl token, no cookies,
// a disk cache in the user cache directory. There is no lighter way to identify a collector: a
// User-Agent set anywhere but the transport misses robots.txt fetches, redirect hops and retries
// (and is overwritten by callbacks such as Colly's RandomUserAgent).
//
// What c already has is carried into the door, refused, or overridden and said — never dropped:
//   - carried: a proxy set with SetProxy or SetProxyFunc (into Policy.Proxy), an *http.Transport
//     set with WithTransport or SetClient (Policy.BaseTransport), the client's timeout
//     (SetRequestTimeout, Colly's 10 s by default) when stricter than Policy.Timeout, a
//     MaxBodySize other than Colly's default (every kind's cap but robots.txt's is lowered to it;
//     a longer body is an error naming MaxBodySize, not a silent cut), and CacheDir (the
//     directory of the door's disk cache; CacheExpiration becomes Policy.MinRevisit);
//   - refused with an error naming what to set instead: a proxy or transport that conflicts with
//     the Policy's, any other transport, CacheDir with Policy.NoCache, a Policy.CacheStore or a
//     user-triggered policy, and cookies already in Colly's jar (the door does not use it;
//     Policy.Cookies declares the purpose that keeps cookies);
//   - overridden and said once, in one Warn record at start: a UserAgent the scraper set (the
//     identity is sent), IgnoreRobotsTxt = false (the door obeys robots.txt), Async and LimitRules
//     looser than the door's budget, SetRequestTimeout(0) and MaxBodySize 0 (the door bounds
//     both), a cookie jar it cannot read.
//
// Polite then turns off what the door replaces — Colly's robots.txt check (IgnoreRobotsTxt =
// true), its cookie jar, its CacheDir, MaxBodySize and client timeout — and sets c.UserAgent to
// the policy's User-Agent. A User-Agent set later on a request (a callback, Colly's
// RandomUserAgent, c.UserAgent) is replaced too, and the door says so once, at the first such
// request. Refusals keep Colly's errors: a URL robots.txt disallows is colly.ErrRobotsTxtBlocked
// as well as robots.ErrDisallowed, and a request to an origin the door gave up is
// [ErrOriginGivenUp].
//
// When p has no valid identity, or a setting is refused, Polite returns the error and leaves c
// unable to send anything — every request fails with that error — so a scraper that ignores the
// error still never goes out under Colly's default User-Agent.
//
// Configure proxies with Policy.Proxy and timeouts with Policy.Timeout: Colly's SetProxy,
// SetProxyFunc, SetClient, WithTransport and SetRequestTimeout called after Polite replace or
// weaken the door. Polite watches for that through c.Context (every request's context, clones'
// included, derives from it): once the transport is no longer the door, each request is
// cancelled before it leaves with [ErrDoorBypassed], an error is logged, and [Status] reports
// it. Do not replace c.Context after Polite.
func Polite(c *colly.Collector, p politeness.Policy) error {
	_, err := Install(c, p)
	return err
}

// Install is Polite that also returns the door, for callers that read its events or stats.
func Install(c *colly.Collector, p politeness.Policy) (*politeness.Door, error) {
	return install(c, p, nil)
}

// install is Install with the collector's transport wrapped by wrap (nil: none); the wrapper is
// what the guard then expects to find.
func install(c *colly.Collector, p politeness.Policy, wrap func(http.RoundTripper) http.RoundTripper) (*politeness.Door, error) {
	if c == nil {
		return nil, errors.New("etiquette: nil collector")
	}
	client, ok := clientReader(c)
	if !ok {
		return nil, errors.New("etiquette: this Colly version's collector layout is not the one Polite was built for (v2.3.0); cannot watch its transport")
	}
	logger := quietlog.Or(p.Logger)
	var prev *guardState
	if g, ok := c.Context.(*guard); ok {
		prev = g.state.Load()
	}
	settings := readCollector(c, client(), prev)
	p, took, stated, err := settings.carry(p, logger)
	var d *politeness.Door
	if err == nil {
		d, err = politeness.NewDoor(p)
	}
	if err != nil {
		// Leave c unable to send: its transport fails every request, and its context is done.
		err = fmt.Errorf("%w (this collector sends nothing until extensions.Polite succeeds)", err)
		refusing := refusingTransport{err}
		c.WithTransport(refusing)
		installGuard(c, client, &guardState{transport: refusing, settings: settings,
			refused: fmt.Errorf("%w: %w", err, context.Canceled), logger: logger, bus: &events.Bus{}})
		return nil, err
	}
	var transport http.RoundTripper = &collyTransport{next: d, maxBody: took.maxBody, proxied: took.proxied}
	if wrap != nil {
		transport = wrap(transport)
	}
	c.WithTransport(transport)
	c.SetRequestTimeout(0)
	c.DisableCookies()
	c.IgnoreRobotsTxt = true
	c.CacheDir = ""
	c.MaxBodySize = 0
	c.UserAgent = d.UserAgent()
	stateOverrides(logger, append(stated, settings.overrides(p, d.UserAgent())...))
	installGuard(c, client, &guardState{door: d, transport: transport, settings: settings, logger: logger, bus: d.Events()})
	return d, nil
}

// Status reports whether c still sends through the door installed by Polite: nil when it does,
// an error naming what changed when a setter replaced or weakened it, or an error when Polite was
// never installed on c or refused (clones answer as the collector they were cloned from).
func Status(c *colly.Collector) error {
	g, ok := c.Context.(*guard)
	if !ok {
		return errors.New("etiquette: Polite is not installed on this collector")
	}
	return g.check()
}

// guard is the collector's context. Its Done and Err report cancellation as soon as the
// collector's client no longer has the door as its transport, or has an overall timeout (which
// would count the wait for the host clock against the request), so no request leaves outside
// the door: Go's client and transport refuse to send on a cancelled context.
//
// Colly's Clone copies c.Context, so a collector and its clones share one guard; calling Polite
// again updates that guard's state rather than wrapping another guard around it, so clones made
// before follow the new door.
type guard struct {
	context.Context
	client func() *http.Client // the collector's current client
	state  atomic.Pointer[guardState]
}

// guardState is what one Polite call installed: a door, or the refusal of an invalid policy.
type guardState struct {
	door      *politeness.Door
	transport http.RoundTripper // the collector's transport as installed: the door, or a wrapper of it
	refused   error             // non-nil: Polite failed; the context is done from the start
	settings  collectorSettings // what Polite read from the collector
	logger    *slog.Logger
	bus       *events.Bus

	once   sync.Once
	done   chan struct{}
	bypass atomic.Pointer[error]
}

// installGuard gives c's guard the state st, wrapping c's context in a guard that reads c's
// client with client the first time.
func installGuard(c *colly.Collector, client func() *http.Client, st *guardState) {
	st.done = make(chan struct{})
	if st.refused != nil {
		close(st.done)
	}
	if g, ok := c.Context.(*guard); ok {
		g.state.Store(st)
		return
	}
	parent := c.Context
	if parent == nil {
		parent = context.Background()
	}
	g := &guard{Context: parent, client: client}
	g.state.Store(st)
	c.Context = g
}

// check returns the parent's error, the refusal, or the bypass error once the door was replaced
// or weakened.
func (g *guard) check() error {
	if err := g.Context.Err(); err != nil {
		return err
	}
	st := g.state.Load()
	if st.refused != nil {
		return st.refused
	}
	if e := st.bypass.Load(); e != nil {
		return *e
	}
	client := g.client()
	var why string
	switch {
	case client == nil:
		why = "the collector has no HTTP client"
	case client.Transport != st.transport:
		why = fmt.Sprintf("its transport was replaced (now %T) — SetProxy, SetProxyFunc, SetClient or WithTransport was called after Polite; set Policy.Proxy or Policy.BaseTransport instead", client.Transport)
	case client.Timeout != 0:
		why = fmt.Sprintf("SetRequestTimeout(%s) was called after Polite: a client timeout counts the wait for the origin's turn; set Policy.Timeout instead", client.Timeout)
	default:
		return nil
	}
	st.once.Do(func() {
		err := fmt.Errorf("%w: %s: %w", ErrDoorBypassed, why, context.Canceled)
		st.bypass.Store(&err)
		close(st.done)
		st.logger.Error("etiquette: collector no longer polite; its requests are cancelled", "reason", why)
		st.bus.Emit(events.Event{Type: events.Notice, Reason: "door-bypassed", Detail: err.Error(), Err: err})
	})
	return *st.bypass.Load()
}

// Done is closed when the parent is done, Polite refused, or the door was bypassed.
func (g *guard) Done() <-chan struct{} {
	if g.check() != nil && g.Context.Err() == nil {
		return g.state.Load().done
	}
	return g.Context.Done()
}

// Err reports the parent's error, the refusal or the bypass.
func (g *guard) Err() error { return g.check() }

type refusingTransport struct{ err error }

func (t refusingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	return nil, t.err
}
