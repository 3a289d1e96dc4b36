// Package politeness is the one door every outgoing request passes: an http.RoundTripper stack
// that identifies the crawler, decides robots.txt, keeps cookies out, answers from the cache,
// backs off when a site asks and waits for the origin's turn — in that order, for every request,
// redirect hop, robots.txt fetch and retry.
//
// The stack, top to bottom (see [NewDoor]):
//
//	identity → robots gate → cookies → cache → backoff → host clock → net/http.Transport
//
// Because enforcement lives in the transport, no Colly option, callback or redirect can route
// around it: Go's http.Client calls the transport once per redirect hop, and the door's own
// requests (robots.txt) enter at the top like any other.
//
// Per-origin state — the host clock and the robots.txt keeper — is process-wide by default: two
// doors, two collectors and every clone in one process share one budget per origin, because the
// site pays for the crawler as a whole (the RRZE rules count it so). This is the one justified
// global; pass Policy.Clock and Policy.Robots to give a door its own.
package politeness

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/politecrawl/etiquette/cookies"
	"github.com/politecrawl/etiquette/politeness/backoff"
	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/robots"
	"github.com/politecrawl/etiquette/politeness/webbotauth"
)

// MaxRedirects is the number of redirect hops [Door.Client] follows (Go's and Colly's default).
const MaxRedirects = 10

// MaxRobotsRedirects is the number of redirect hops followed for robots.txt (RFC 9309 §2.3.1.2).
const MaxRobotsRedirects = 5

// Door is the top of the request stack. It is an http.RoundTripper; use it as the Transport of
// an http.Client that has no cookie jar, or call [Door.Client]. A Door is safe for concurrent use.
type Door struct {
	policy  Policy
	top     http.RoundTripper // identity layer: where every request, the door's own included, enters
	clock   hostclock.Clock
	keeper  *robots.Keeper
	jar     *cookies.Jar
	cache   *cache.Transport // nil with NoCache
	bus     *events.Bus
	stats   *Stats
	robotsC *http.Client // the gate's client for robots.txt: ≤5 redirects, no jar, enters at top

	stopped atomic.Bool
	pending sync.Map // *pending → struct{}: requests not yet on the wire (see Stop)
}

// NewDoor validates p and builds the stack. It fails when the identity is missing
// (identity.ErrNoIdentity) or invalid (the error lists every problem and how to fix it), when
// Rate is above 3 or Concurrency above 2 without an explicit Clock, when the cookie purpose names
// an unknown class, or when the default disk cache cannot be opened.
func NewDoor(p Policy) (*Door, error) {
	if p.Identity.IsZero() {
		return nil, fmt.Errorf("etiquette: %w", identity.ErrNoIdentity)
	}
	if _, err := p.Identity.Validate(); err != nil {
		return nil, fmt.Errorf("etiquette: the crawler identity is not usable: %w", err)
	}
	d := &Door{policy: p, bus: p.Events, stats: newStats()}
	if d.bus == nil {
		d.bus = &events.Bus{}
	}
	d.bus.Subscribe(d.stats.record)
	logger := p.Logger
	if logger == nil {
		logger = slog.Default()
	}
	d.bus.Subscribe(logEvents(logger))

	var err error
	var stricter hostclock.Clock
	if d.clock, stricter, err = p.clocks(); err != nil {
		return nil, err
	}
	if d.keeper = p.Robots; d.keeper == nil {
		d.keeper = processKeeper()
	}
	if p.Cookies != nil {
		opts := cookies.Options{Logger: p.Logger, OnRefuse: func(r cookies.Refusal) {
			d.bus.Emit(events.Event{Type: events.Notice, URL: r.Origin, Reason: cookieRefused, Detail: r.Reason + ": " + r.Name})
		}}
		if d.jar, err = cookies.NewJar(*p.Cookies, opts); err != nil {
			return nil, fmt.Errorf("etiquette: cookie purpose: %w", err)
		}
	}

	signer, err := p.Signer()
	if err != nil {
		return nil, err
	}

	base := p.BaseTransport
	if base == nil {
		base = http.DefaultTransport.(*http.Transport).Clone()
	} else {
		base = base.Clone()
	}
	if p.Proxy != nil {
		base.Proxy = p.Proxy
	}
	// A proxy CONNECT carries no request headers of ours; without this it says Go-http-client.
	agent := p.agent()
	if base.ProxyConnectHeader == nil {
		base.ProxyConnectHeader = http.Header{}
	}
	base.ProxyConnectHeader.Set("User-Agent", agent)
	if get := base.GetProxyConnectHeader; get != nil {
		// A transport that computes its CONNECT headers would otherwise replace ours.
		base.GetProxyConnectHeader = func(ctx context.Context, proxyURL *url.URL, target string) (http.Header, error) {
			h, err := get(ctx, proxyURL, target)
			// The function may hand out a map it shares; set ours on a copy.
			h = h.Clone()
			if h == nil {
				h = http.Header{}
			}
			h.Set("User-Agent", agent)
			return h, err
		}
	}

	// The stack, top to bottom. Each layer wraps the one below it; read it from the top.
	var rt http.RoundTripper = wireLayer(webbotauth.Layer(base, signer), d)
	rt = hostclock.Layer(rt, d.clock, hostclock.LayerOptions{Timeout: p.timeout(), Sink: d.bus})
	if stricter != nil {
		// This door's own lower rate or concurrency, on top of the process-wide budget: a request
		// waits for both, so the stricter rule wins and the origin still has one budget.
		rt = hostclock.Layer(rt, stricter, hostclock.LayerOptions{Sink: withoutPauses{d.bus}})
	}
	rt = backoff.Layer(rt, d.clock, backoff.Options{Sink: d.bus, Logger: logger})
	if !p.NoCache {
		store, err := p.cacheStore(logger)
		if err != nil {
			return nil, err
		}
		d.cache = cache.New(rt, store, cache.Options{Logger: logger, Events: d.bus, MinRevisit: p.MinRevisit,
			OmitHeaders: []string{"Set-Cookie", "Set-Cookie2"}})
		rt = d.cache
	}
	rt = cookieLayer(rt, d.jar, d.bus)
	rt = robotsGate(rt, d)
	rt = identityLayer(rt, p)
	rt = reportLayer(rt, d)
	d.top = rt

	d.robotsC = &http.Client{
		Transport: d.top,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > MaxRobotsRedirects {
				return fmt.Errorf("robots.txt: more than %d redirects (RFC 9309 §2.3.1.2)", MaxRobotsRedirects)
			}
			return nil
		},
	}
	return d, nil
}

// RoundTrip sends req through the whole stack. It never modifies req.
func (d *Door) RoundTrip(req *http.Request) (*http.Response, error) {
	return d.top.RoundTrip(req)
}

// Client returns an http.Client whose transport is the door: no cookie jar (the door's cookies
// layer keeps what a declared purpose needs), at most [MaxRedirects] hops, and no overall
// Timeout (the door's timeout starts when the host clock grants the slot).
func (d *Door) Client() *http.Client {
	return &http.Client{
		Transport: d,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= MaxRedirects {
				return fmt.Errorf("stopped after %d redirects", MaxRedirects)
			}
			return nil
		},
	}
}

// Events returns the bus the door reports its decisions on.
func (d *Door) Events() *events.Bus { return d.bus }

// Stats returns a snapshot of what the door did so far.
func (d *Door) Stats() StatsSnapshot {
	s := d.stats.snapshot()
	if d.cache != nil {
		s.CacheBytesSaved = d.cache.Stats().BytesSaved
	}
	return s
}

// UserAgent returns the User-Agent the door sends.
func (d *Door) UserAgent() string { return d.policy.agent() }

var (
	keeperOnce sync.Once
	keeper     *robots.Keeper
)

// clocks returns the clock that holds p's budget and, for a policy stricter than the default,
// a clock of the door's own that its requests pass as well:
//   - Policy.Clock when set;
//   - otherwise hostclock.Shared(), the one process-wide budget per origin, with p's
//     AuthorizedRates registered on it (an authorisation belongs to the origin, so every door
//     of the process may use it);
//   - plus, for a lower Rate or Concurrency, a clock of the door's own with those limits: a
//     request waits for both, so the stricter rule wins and the origin keeps one budget.
//
// A Concurrency above the default would widen every door's budget, so it needs an explicit
// Policy.Clock.
func (p Policy) clocks() (budget, stricter hostclock.Clock, err error) {
	if p.Clock != nil {
		return p.Clock, nil, nil
	}
	if p.Rate > DefaultRate {
		return nil, nil, fmt.Errorf("etiquette: Policy.Rate %g is above %d starts per second per host; "+
			"the RRZE crawler rules require the operator's authorisation for more: list the host and its rate in Policy.AuthorizedRates", p.Rate, DefaultRate)
	}
	if p.Concurrency > DefaultConcurrency {
		return nil, nil, fmt.Errorf("etiquette: Policy.Concurrency %d is above the process-wide %d in flight per host; "+
			"build a clock with hostclock.NewLocal(hostclock.Config{Concurrency: %d}) and pass it as Policy.Clock to every door of the process",
			p.Concurrency, DefaultConcurrency, p.Concurrency)
	}
	shared := hostclock.Shared()
	for key, rate := range p.AuthorizedRates {
		if err := shared.Authorize(key, rate); err != nil {
			return nil, nil, fmt.Errorf("etiquette: Policy.AuthorizedRates: %w", err)
		}
	}
	if p.rate() == DefaultRate && p.concurrency() == DefaultConcurrency {
		return shared, nil, nil
	}
	own, err := hostclock.NewLocal(hostclock.Config{Rate: p.rate(), Authorized: p.AuthorizedRates,
		Concurrency: p.concurrency(), Logger: p.Logger})
	if err != nil {
		return nil, nil, fmt.Errorf("etiquette: %w", err)
	}
	return shared, own, nil
}

// withoutPauses drops Paused events. A door's own stricter clock learns the same outcomes as the
// process-wide clock below it, which already reports every pause.
type withoutPauses struct{ events.Sink }

func (w withoutPauses) Emit(e events.Event) {
	if e.Type != events.Paused {
		w.Sink.Emit(e)
	}
}

func processKeeper() *robots.Keeper {
	keeperOnce.Do(func() { keeper = robots.NewKeeper(robots.Options{}) })
	return keeper
}

// internalKey marks the door's own requests (robots.txt) in their context. It is unexported, so
// no caller — and no header a Colly callback sets — can claim the mark.
type internalKey struct{}

func markInternal(ctx context.Context) context.Context {
	return context.WithValue(ctx, internalKey{}, true)
}

func isInternal(ctx context.Context) bool {
	v, _ := ctx.Value(internalKey{}).(bool)
	return v
}
