// Package cache is an RFC 9111 private cache for a crawler, as an [http.RoundTripper]: a fresh
// stored response is answered without touching the network, a stale one is revalidated with a
// conditional request (If-None-Match and If-Modified-Since) so an unchanged page costs a 304, and
// every response says what the cache did ([StatusOf]: miss, fresh, revalidated, stale).
//
// Most callers want [NewTransport] (defaults, in-memory store) or [New] (with [Options] and a
// [DiskStore]). Bodies stream through the store: a large body costs a buffer, not its size.
//
// On top of the protocol sits a crawler policy keyed on the request's kind ([kind.Of]): re-reads
// of robots.txt, sitemaps, llms.txt and feeds are always revalidated conditionally; a stored
// robots.txt is not used for more than 24 hours unless the origin cannot be reached (RFC 9309
// §2.4), whatever freshness it claims and whichever process stored it; and an optional minimum
// revisit interval serves a recent stored copy instead of asking the origin again.
//
// No credential reaches a store. A response that varies on Cookie, Authorization or
// Proxy-Authorization is passed through unstored: its key and vary record would hold the
// request's value of that field — for Cookie, the session cookie the door's cookie layer adds
// above the cache — and a variant made for one session is of no use to the next one anyway.
// [Options.OmitHeaders] keeps Set-Cookie out of stored responses.
//
// The files of the package divide the work: freshness.go decides whether a stored response may
// be served as it is, policy.go holds the crawler's rules on top of RFC 9111, storable.go decides
// what is stored, lookup.go finds the stored response for a request, tee.go writes a response into
// the store as the caller reads it, revalidate.go asks the origin about a stored response, and
// invalidate.go handles the methods the cache does not answer.
package cache

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/freshness"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// StatusHeader is the response header in which the transport reports what it did, read by
// [StatusOf]. It is private to this process: the transport removes any value an origin sent,
// never stores it, and the door may strip it before a response reaches the caller.
const StatusHeader = "Etiquette-Cache"

// The values [StatusOf] reports.
const (
	// Miss: the response came from the origin in full (nothing usable was stored, or the stored
	// copy changed).
	Miss = "miss"
	// Fresh: a fresh stored response, served without contacting the origin.
	Fresh = "fresh"
	// Revalidated: the origin answered a conditional request with 304; the stored body was served.
	Revalidated = "revalidated"
	// Stale: a stored response past its freshness lifetime, served because stale-if-error (RFC
	// 5861 §4, or Options.StaleIfError) allowed it after an origin error, because the request
	// allowed it (max-stale), or under the minimum revisit interval (Options.MinRevisit).
	Stale = "stale"
)

// StatusOf reports what the cache did for resp: [Miss], [Fresh], [Revalidated], [Stale], or ""
// when the cache did not take part (a method other than GET/HEAD, a Range request, a request with
// Cache-Control: no-store, or a response that did not pass through a [Transport]). It reads
// [StatusHeader].
func StatusOf(resp *http.Response) string {
	if resp == nil {
		return ""
	}
	return resp.Header.Get(StatusHeader)
}

// Options tune a [Transport]. The zero value gives RFC 9111 behaviour with a 10 % heuristic capped
// at 24 hours, no minimum revisit interval, and robots/sitemap/llms/feed always revalidated.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// HeuristicFraction is the share of the time since Last-Modified that a response without
	// explicit freshness stays fresh (RFC 9111 §4.2.2 suggests 10 %). 0 means 0.1; a negative
	// value turns heuristic freshness off.
	HeuristicFraction float64
	// HeuristicMax caps heuristic freshness; 0 means 24 hours.
	HeuristicMax time.Duration
	// MinRevisit is the crawler's minimum revisit interval: a stored response received (or
	// revalidated) less than this long ago is served (as [Stale] once past its freshness)
	// instead of asking the origin again, unless the response says must-revalidate or no-cache,
	// the request says no-cache, or its kind is always revalidated. 0 turns the policy off.
	MinRevisit time.Duration
	// StaleIfError lets the cache serve a stored response up to this long past its freshness when
	// revalidation meets a network error or a 500, 502, 503 or 504, as if every response carried
	// stale-if-error (RFC 5861 §4); must-revalidate and no-cache still forbid it. 0 means only the
	// response's or request's own stale-if-error counts.
	StaleIfError time.Duration
	// StaleOnDisconnect lets the cache serve a stored response up to this long past its freshness
	// when the origin cannot be reached at all (a network error that is not the caller's own
	// cancellation): RFC 9111 §4.2.4 allows a disconnected cache to serve stale responses.
	// must-revalidate and no-cache still forbid it. 0 means 24 hours; a negative value turns it off.
	StaleOnDisconnect time.Duration
	// AlwaysRevalidate lists the request kinds whose stored responses are revalidated on every
	// use (when they have a validator). nil means robots, sitemap, llms and feed; an empty,
	// non-nil slice means none.
	AlwaysRevalidate []kind.Kind
	// Logger receives store errors and removed corrupt entries at debug/warn level; nil discards.
	Logger *slog.Logger
	// Events receives a Notice (Reason "cache-corrupt") for each damaged entry the store removed;
	// nil discards.
	Events events.Sink
	// OmitHeaders names response fields never stored, beyond those RFC 9111 excludes. RFC 9111
	// lets a cache store Set-Cookie; the door omits Set-Cookie and Set-Cookie2, because a cookie
	// on disk would outlive the session and be handed to the next process on every hit (the live
	// response still carries them up to the door's cookie layer).
	OmitHeaders []string
}

// Stats counts what a [Transport] did since it was created.
type Stats struct {
	Miss, Fresh, Revalidated, Stale int64
	// BytesSaved is the size of the stored bodies served instead of being transferred again
	// (fresh, revalidated and stale responses).
	BytesSaved int64
	// Corrupt counts damaged entries found (each was removed and counted as a miss).
	Corrupt int64
}

// Transport is the caching [http.RoundTripper]. Create one with [New] or [NewTransport]; it is
// safe for concurrent use.
type Transport struct {
	next      http.RoundTripper
	store     Store
	o         Options
	log       *slog.Logger
	heuristic freshness.Heuristic

	miss, fresh, revalidated, stale, saved, corrupt atomic.Int64
	inflight                                        sync.Map // keys under background revalidation
}

// NewTransport returns a cache in front of next (nil means http.DefaultTransport) keeping its
// responses in store (nil means a [NewMemoryStore] of [DefaultMemoryBytes]), with default [Options].
func NewTransport(next http.RoundTripper, store Store) http.RoundTripper {
	return New(next, store, Options{})
}

// New returns a cache in front of next with options o; nil next and store as in [NewTransport].
func New(next http.RoundTripper, store Store, o Options) *Transport {
	if next == nil {
		next = http.DefaultTransport
	}
	if store == nil {
		store = NewMemoryStore(0)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.HeuristicFraction == 0 {
		o.HeuristicFraction = 0.1
	}
	if o.HeuristicMax <= 0 {
		o.HeuristicMax = 24 * time.Hour
	}
	if o.StaleOnDisconnect == 0 {
		o.StaleOnDisconnect = 24 * time.Hour
	}
	if o.AlwaysRevalidate == nil {
		o.AlwaysRevalidate = []kind.Kind{kind.Robots, kind.Sitemap, kind.LLMs, kind.Feed}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Events == nil {
		o.Events = events.Discard
	}
	t := &Transport{next: next, store: store, o: o, log: o.Logger}
	if o.HeuristicFraction > 0 {
		t.heuristic = freshness.Heuristic{Fraction: o.HeuristicFraction, Max: o.HeuristicMax}
	}
	return t
}

// Stats returns the counters so far.
func (t *Transport) Stats() Stats {
	return Stats{Miss: t.miss.Load(), Fresh: t.fresh.Load(), Revalidated: t.revalidated.Load(),
		Stale: t.stale.Load(), BytesSaved: t.saved.Load(), Corrupt: t.corrupt.Load()}
}

// RoundTrip implements [http.RoundTripper]. It never modifies req.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return t.passUnsafe(req)
	}
	rcc := freshness.CacheControl(req.Header)
	if req.Header.Get("Range") != "" || rcc.Has("no-store") {
		// Partial content is not stored, and request no-store forbids storing (RFC 9111 §5.2.1.5).
		return t.pass(req)
	}
	if hasConditional(req.Header) {
		// The caller's own validators go to the origin untouched; a full response is stored.
		return t.fetch(req)
	}

	key, e, body := t.lookup(req)
	if e == nil {
		if rcc.Has("only-if-cached") {
			return t.gatewayTimeout(req), nil
		}
		return t.fetch(req)
	}
	now := t.o.Now()
	if t.unchangedSince(req, e, rcc, now) {
		resp := t.serve(req, e, body, Fresh, now)
		resp.Header.Set(ReasonHeader, ReasonLastModified)
		return resp, nil
	}
	switch t.reuse(req, e, rcc, now) {
	case serveFresh:
		return t.serve(req, e, body, Fresh, now), nil
	case serveStale:
		return t.serve(req, e, body, Stale, now), nil
	case serveStaleAndRevalidate:
		// stale-while-revalidate (RFC 5861 §3): the stored copy now, a revalidation in the
		// background, through the same layers below (so it is budgeted like any request).
		t.revalidateInBackground(req, key, e, rcc)
		return t.serve(req, e, body, Stale, now), nil
	}
	body.Close()
	if rcc.Has("only-if-cached") {
		return t.gatewayTimeout(req), nil
	}
	return t.revalidate(req, key, e, rcc)
}

func hasConditional(h http.Header) bool {
	for _, n := range []string{"If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range"} {
		if len(h.Values(n)) > 0 {
			return true
		}
	}
	return false
}

// fetch sends req unchanged and stores the response when it may.
func (t *Transport) fetch(req *http.Request) (*http.Response, error) {
	reqTime := t.o.Now()
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	return t.keep(req, resp, reqTime, t.o.Now()), nil
}

// serve answers req from a stored response.
func (t *Transport) serve(req *http.Request, e *Entry, body io.ReadCloser, status string, now time.Time) *http.Response {
	h := e.Header.Clone()
	for _, n := range t.o.OmitHeaders {
		// Also for entries stored before the option was set (an older cache directory).
		h.Del(n)
	}
	h.Set("Age", strconv.FormatInt(int64(e.response().Age(now)/time.Second), 10))
	h.Set(StatusHeader, status)
	resp := &http.Response{
		Status:     fmt.Sprintf("%d %s", e.Status, http.StatusText(e.Status)),
		StatusCode: e.Status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: body, ContentLength: e.Size, Request: req,
	}
	if req.Method == http.MethodHead {
		body.Close()
		resp.Body = http.NoBody
	}
	switch status {
	case Fresh:
		t.fresh.Add(1)
	case Revalidated:
		t.revalidated.Add(1)
	case Stale:
		t.stale.Add(1)
	}
	t.saved.Add(e.Size)
	return resp
}

func (t *Transport) gatewayTimeout(req *http.Request) *http.Response {
	// RFC 9111 §5.2.1.7: only-if-cached with nothing usable stored gets a 504.
	return &http.Response{
		Status: "504 Gateway Timeout", StatusCode: http.StatusGatewayTimeout,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{StatusHeader: {Miss}}, Body: http.NoBody, Request: req,
	}
}

// drain reads a small remainder of body so the connection can be reused, then closes it.
func drain(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, 4<<10)
	body.Close()
}
