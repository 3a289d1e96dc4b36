// Package politeness is the one door every outgoing request passes: an http.RoundTripper stack
// that identifies the crawler, decides robots.txt, keeps cookies out, answers from the cache,
// backs off when a site asks and waits for the origin's turn — in that order, for every request,
// redirect hop, robots.txt fetch and retry.
//
// Where to start: a Colly scraper calls extensions.Polite, which builds the door into its
// collector; from this package it only fills a [Policy]. Any other Go program makes the door with
// [NewDoor] — Policy{Identity: id}, the identity from package politeness/identity, is a complete
// policy with the defaults — and sends through [Door.Client], or uses the [Door] as an
// [net/http.RoundTripper]. Policy holds every setting and documents its default. Siblings:
// crawler.Run crawls through a door; package report turns the door's events ([Door.Events],
// package politeness/events) into a report; package etiquettetest checks a scraper against a
// recording site; package redisstore shares the per-origin state between machines.
//
// The stack, top to bottom, as [NewDoor] builds it:
//
//	identity → robots gate → cookies → cache → backoff → host clock → net/http.Transport
//
// Around these seven sit layers that serve the whole stack rather than one rule (marked ·):
//
//	http.Client              calls the door once per redirect hop: every hop enters at the top
//	· redirect credentials   a hop drops the userinfo its Location carried: no Basic auth to
//	                         another origin, no password in a log, an event or a cache key
//	· events                 one Response event per response when its body ends (status, cache
//	                         outcome, bytes); every event redacts passwords in URLs
//	· Stop tracking          registers the request so that Door.Stop can cancel it while it waits;
//	                         counts the waiting ones (the backlog notice)
//	· body cap               cuts a body at its kind's cap, with an error, never silently
//	identity                 User-Agent, From; the request's kind into its context; Accept by kind
//	· wait bound             user-triggered only: a person's request waits for its origin's turn
//	                         up to Policy.MaxWait, else fails at once (hostclock.WaitTooLongError)
//	robots gate              RFC 9309 for this exact URL; fetches robots.txt by sending a marked
//	                         request into the top of the door
//	cookies                  none, or only what a declared purpose needs, for its own origin
//	cache                    RFC 9111; a fresh hit returns here and spends no budget
//	backoff                  re-sends after 429/503 once the host clock's pause ends
//	· Set-Cookie             every answer's Set-Cookie (304s and retried 429s too) filed through
//	                         the purpose jar, refusals counted, then removed
//	· door's own clock       only for a Rate or Concurrency below the process-wide default
//	host clock               the process-wide start budget per origin; the timeout starts here
//	· wire                   Stop leaves a request alone from here on
//	· private networks       a redirect hop from a public address may not reach a private one
//	                         (checked on the address the dial resolved)
//	net/http.Transport
//
// Because enforcement lives in the transport, no Colly option, callback or redirect can route
// around it: Go's http.Client calls the transport once per redirect hop, and the door's own
// requests (robots.txt) enter at the top like any other.
//
// Per-origin state — the host clock and the robots.txt keeper — is process-wide by default: two
// doors, two collectors and every clone in one process share one budget per origin, because the
// site pays for the crawler as a whole (the RRZE rules count it so). Pass Policy.Clock and
// Policy.Robots to give a door its own. So is the default disk cache, one store per directory,
// so that the doors of a process keep one index of it and write one segment file.
package politeness

import (
	"fmt"
	"net/http"

	"github.com/politecrawl/etiquette/politeness/backoff"
	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/webbotauth"
)

// MaxRedirects is the number of redirect hops [Door.Client] follows (Go's and Colly's default).
const MaxRedirects = 10

// Door is the top of the request stack. It is an http.RoundTripper; use it as the Transport of
// an http.Client that has no cookie jar, or call [Door.Client]. A Door is safe for concurrent use.
//
// Its decisions are events ([Door.Events]) and counters ([Door.Stats]). Besides one event per
// request, it emits a Notice (reason "backlog") when more than 1,000 of its requests wait for
// their origin's turn at once — with an Async Colly collector, a sign to bound the queue.
type Door struct {
	agent   string
	top     http.RoundTripper
	bus     *events.Bus
	stats   *Stats
	cache   *cache.Transport // nil with NoCache
	pending *pendingRequests
	robots  robotsLookup
}

// NewDoor validates p and builds the stack. It fails when the identity is missing
// (identity.ErrNoIdentity) or invalid (the error lists every problem and how to fix it), when
// Rate is above 3 or Concurrency above 2 without an explicit Clock, when the cookie purpose names
// an unknown class, or when the default disk cache cannot be opened.
func NewDoor(p Policy) (*Door, error) {
	return newDoor(p, nil)
}

// newDoor is NewDoor with bottom in place of the base transport when it is not nil (a benchmark
// of the door's own cost answers from memory).
func newDoor(p Policy, bottom http.RoundTripper) (*Door, error) {
	if p.Identity.IsZero() {
		return nil, fmt.Errorf("etiquette: %w", identity.ErrNoIdentity)
	}
	if _, err := p.Identity.Validate(); err != nil {
		return nil, fmt.Errorf("etiquette: the crawler identity is not usable: %w", err)
	}
	if p.MaxWait < 0 {
		return nil, fmt.Errorf("etiquette: Policy.MaxWait is %s; want 0 (the default, %s) or a positive bound on a person's wait", p.MaxWait, DefaultMaxWait)
	}
	logger := p.logger()
	bus := p.Events
	if bus == nil {
		bus = &events.Bus{}
	}
	d := &Door{agent: p.agent(), bus: bus, stats: newStats(), pending: newPendingRequests(bus)}
	bus.Subscribe(d.stats.record)
	bus.Subscribe(logEvents(logger))

	budget, stricter, err := p.clocks()
	if err != nil {
		return nil, err
	}
	jar, err := p.jar(logger)
	if err != nil {
		return nil, err
	}
	cookieDoor := newCookieDoor(jar, bus)
	var store cache.Store
	if !p.NoCache {
		if store, err = p.cacheStore(logger); err != nil {
			return nil, err
		}
	}
	signer, err := p.Signer()
	if err != nil {
		return nil, err
	}
	plain := p.baseTransport()
	if bottom == nil {
		bottom = plain
	}
	var guard *networkGuard
	if !p.AllowPrivateRedirects {
		guard = newNetworkGuard(plain, p.BaseTransport != nil && (p.BaseTransport.DialContext != nil || p.BaseTransport.Dial != nil))
	}
	entrance := &entrance{} // robots.txt fetches enter the door here, once it is built
	fetchRobots := robotsFetch(entrance, p.timeout(), bus)
	d.robots = robotsLookup{keeper: p.keeper(), fetch: fetchRobots}

	// The stack, top to bottom, as in the package doc. Each layer wraps the ones below it.
	d.top = stack(bottom,
		func(next http.RoundTripper) http.RoundTripper { return dropRedirectCredentials(next) },
		func(next http.RoundTripper) http.RoundTripper { return nameTimeouts(next, p.timeout()) },
		func(next http.RoundTripper) http.RoundTripper { return reportResponses(next, bus) },
		func(next http.RoundTripper) http.RoundTripper { return trackPending(next, d.pending, bus) },
		func(next http.RoundTripper) http.RoundTripper { return capBodies(next, p.maxBody) },
		func(next http.RoundTripper) http.RoundTripper {
			return identityLayer(next, p.agent(), p.Identity.From(), bus)
		},
		func(next http.RoundTripper) http.RoundTripper {
			if p.Mode != UserTriggered {
				return next
			}
			return boundWait(next, p.maxWait(), budget, bus)
		},
		func(next http.RoundTripper) http.RoundTripper {
			if guard == nil {
				return next
			}
			return refuseNamedPrivate(next, guard, bus) // before the gate asks for robots.txt
		},
		func(next http.RoundTripper) http.RoundTripper {
			return robotsGate(next, d.robots.keeper, p.reading(), fetchRobots, budget, bus)
		},
		cookieDoor.requests,
		func(next http.RoundTripper) http.RoundTripper {
			if store == nil {
				return next
			}
			d.cache = cache.New(next, store, cache.Options{Logger: logger, Events: bus, MinRevisit: p.MinRevisit,
				OmitHeaders: []string{"Set-Cookie", "Set-Cookie2"}})
			return d.cache
		},
		func(next http.RoundTripper) http.RoundTripper {
			return backoff.Layer(next, budget, backoff.Options{Sink: bus, Logger: logger})
		},
		// Set-Cookie is filed here, below the cache and backoff, so that the cookies of a 304 and
		// of a retried 429 are counted too; the Cookie header is decided above the cache.
		cookieDoor.responses,
		func(next http.RoundTripper) http.RoundTripper {
			if stricter == nil {
				return next
			}
			// This door's own lower rate or concurrency, on top of the process-wide budget: a
			// request waits for both, so the stricter rule wins and the origin still has one budget.
			return hostclock.Layer(next, stricter, hostclock.LayerOptions{Sink: withoutPauses{bus}})
		},
		func(next http.RoundTripper) http.RoundTripper {
			return hostclock.Layer(next, budget, hostclock.LayerOptions{Timeout: p.timeout(), Sink: bus})
		},
		func(next http.RoundTripper) http.RoundTripper { return wireLayer(next, d.pending) },
		func(next http.RoundTripper) http.RoundTripper {
			if guard == nil {
				return next
			}
			return guardPrivateNetworks(next, guard, bus)
		},
		// Just above net/http: every request that goes out (hop, retry, robots.txt) is signed
		// afresh; nil signer (no Policy.SignKey) passes requests through.
		func(next http.RoundTripper) http.RoundTripper { return webbotauth.Layer(next, signer) },
	)
	entrance.top = d.top
	return d, nil
}

// stack returns layers[0] wrapping layers[1] … wrapping bottom, so that a call site lists the
// layers in the order a request meets them.
func stack(bottom http.RoundTripper, layers ...func(next http.RoundTripper) http.RoundTripper) http.RoundTripper {
	rt := bottom
	for i := len(layers) - 1; i >= 0; i-- {
		rt = layers[i](rt)
	}
	return rt
}

// RoundTrip sends req through the whole stack. It never modifies req.
func (d *Door) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := checkScheme(req); err != nil {
		return nil, err
	}
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
func (d *Door) UserAgent() string { return d.agent }

// Stop makes the door refuse every new request and cancels every request still waiting — for
// robots.txt, a start slot or a pause — with [ErrStopped]. Requests already on the wire are left
// to finish; cancel their contexts to abort them too. Stop is what a crawler calls on SIGINT
// before giving the requests in flight a moment to complete. It cannot be undone.
func (d *Door) Stop() { d.pending.stop() }

// roundTripperFunc lets a function be a layer.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
