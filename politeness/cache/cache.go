// Package cache is an RFC 9111 private cache for a crawler, as an [http.RoundTripper]: a fresh
// stored response is answered without touching the network, a stale one is revalidated with a
// conditional request (If-None-Match and If-Modified-Since) so an unchanged page costs a 304, and
// every response says what the cache did ([StatusOf]: miss, fresh, revalidated, stale).
//
// Most callers want [NewTransport] (defaults, in-memory store) or [New] (with [Options] and a
// [DiskStore]). Bodies stream through the store: a large body costs a buffer, not its size.
//
// On top of the protocol sits a crawler policy keyed on the request's kind
// ([kind.Of]): re-reads of robots.txt, sitemaps, llms.txt and feeds are always revalidated
// conditionally, and an optional minimum revisit interval serves a recent stored copy instead of
// asking the origin again.
package cache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/origin"
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
	// instead of asking the origin again, unless
	// the response says must-revalidate or no-cache, the request says no-cache, or its kind is
	// always revalidated. 0 turns the policy off.
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
	next  http.RoundTripper
	store Store
	o     Options
	log   *slog.Logger

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
	return &Transport{next: next, store: store, o: o, log: o.Logger}
}

// Stats returns the counters so far.
func (t *Transport) Stats() Stats {
	return Stats{Miss: t.miss.Load(), Fresh: t.fresh.Load(), Revalidated: t.revalidated.Load(),
		Stale: t.stale.Load(), BytesSaved: t.saved.Load(), Corrupt: t.corrupt.Load()}
}

// Store returns the store the transport keeps responses in.
func (t *Transport) Store() Store { return t.store }

// RoundTrip implements [http.RoundTripper]. It never modifies req.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return t.passUnsafe(req)
	}
	rcc := requestDirectives(req.Header)
	if req.Header.Get("Range") != "" || rcc.has("no-store") {
		// Partial content is not stored, and request no-store forbids storing (RFC 9111 §5.2.1.5).
		return t.pass(req)
	}
	if hasConditional(req.Header) {
		// The caller's own validators go to the origin untouched; a full response is stored.
		return t.fetch(req)
	}

	key, e, body := t.lookup(req)
	if e == nil {
		if rcc.has("only-if-cached") {
			return t.gatewayTimeout(req), nil
		}
		return t.fetch(req)
	}

	now := t.o.Now()
	age := currentAge(e, now)
	life := t.lifetime(e)
	cc := parseCacheControl(e.Header.Values("Cache-Control"))
	respNoCache := cc.has("no-cache") && cc["no-cache"] == ""
	mustValidate := respNoCache || rcc.has("no-cache") || t.alwaysRevalidates(req, e)

	fresh := life > age
	if v, ok := rcc.seconds("max-age"); ok && age > v {
		fresh = false
	} else if rcc.has("max-age") && !ok {
		fresh = false
	}
	if v, ok := rcc.seconds("min-fresh"); ok && life-age < v {
		fresh = false
	}
	if !mustValidate {
		if fresh {
			return t.serve(req, e, body, Fresh, now), nil
		}
		if !cc.has("must-revalidate") {
			// stale-while-revalidate (RFC 5861 §3): serve the stored copy now and revalidate in
			// the background, through the same layers below (so it is budgeted like any request).
			if d, ok := cc.seconds("stale-while-revalidate"); ok && age-life <= d {
				t.revalidateInBackground(req, key, e, rcc)
				return t.serve(req, e, body, Stale, now), nil
			}
			if ms, present := rcc["max-stale"]; present {
				if v, ok := parseDelta(ms); (ms == "" || ok) && (ms == "" || age-life <= time.Duration(v)*time.Second) {
					return t.serve(req, e, body, Stale, now), nil
				}
			}
			// Measured from when this cache last heard from the origin, not from the response's
			// age: the policy limits how often the crawler asks, whatever a CDN's Age says.
			if t.o.MinRevisit > 0 && now.Sub(e.ResponseTime) < t.o.MinRevisit {
				return t.serve(req, e, body, Stale, now), nil
			}
		}
	}
	if rcc.has("only-if-cached") {
		body.Close()
		return t.gatewayTimeout(req), nil
	}
	body.Close()
	return t.revalidate(req, key, e, rcc)
}

// requestDirectives parses a request's Cache-Control. Pragma is not read: RFC 9111 §5.4
// deprecates it, and a crawler's requests never carry it unless a caller added it by habit.
func requestDirectives(h http.Header) directives {
	return parseCacheControl(h.Values("Cache-Control"))
}

func hasConditional(h http.Header) bool {
	for _, n := range []string{"If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range"} {
		if len(h.Values(n)) > 0 {
			return true
		}
	}
	return false
}

// alwaysRevalidates applies the crawler policy: kinds whose re-reads must reach the origin are
// revalidated on every use, provided a validator makes that a cheap conditional request.
func (t *Transport) alwaysRevalidates(req *http.Request, e *Entry) bool {
	if !slices.Contains(t.o.AlwaysRevalidate, kind.Of(req)) {
		return false
	}
	return e.Header.Get("ETag") != "" || e.Header.Get("Last-Modified") != ""
}

// pass forwards a request the cache does not take part in.
func (t *Transport) pass(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Header.Del(StatusHeader)
	return resp, nil
}

// passUnsafe forwards a request with another method and, after a successful unsafe one,
// invalidates what is stored for its URL and for same-origin Location / Content-Location (RFC
// 9111 §4.4).
func (t *Transport) passUnsafe(req *http.Request) (*http.Response, error) {
	resp, err := t.pass(req)
	if err != nil {
		return nil, err
	}
	switch req.Method {
	case http.MethodOptions, http.MethodTrace:
		return resp, nil
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 400 {
		t.invalidate(req.URL)
		for _, n := range []string{"Location", "Content-Location"} {
			if v := resp.Header.Get(n); v != "" {
				if u, err := req.URL.Parse(v); err == nil && u.Scheme == req.URL.Scheme && u.Host == req.URL.Host {
					t.invalidate(u)
				}
			}
		}
	}
	return resp, nil
}

// invalidate removes the stored response for u; removing a Vary index makes its variants
// unreachable (a later index gets a new generation).
func (t *Transport) invalidate(u *url.URL) {
	if err := t.store.Delete(primaryKey(u)); err != nil {
		t.log.Debug("cache: invalidation failed", "url", u.String(), "err", err)
	}
}

// primaryKey is the cache key of a GET for u (RFC 9111 §2): the URI without its fragment.
func primaryKey(u *url.URL) string {
	c := *u
	c.Fragment, c.RawFragment = "", ""
	return "GET " + c.String()
}

func variantKey(primary, generation string, names []string, h http.Header) string {
	var b strings.Builder
	b.WriteString(primary)
	b.WriteString("\x00")
	b.WriteString(generation)
	for _, n := range names {
		b.WriteString("\x00")
		b.WriteString(n)
		b.WriteString("=")
		b.WriteString(varyValue(h, n))
	}
	return b.String()
}

// lookup finds a stored response whose Vary fields match req (RFC 9111 §4.1). It returns the key
// the response was found under (for updating it) and its body, or a nil entry.
func (t *Transport) lookup(req *http.Request) (string, *Entry, io.ReadCloser) {
	key := primaryKey(req.URL)
	e, body, err := t.store.Get(key)
	if err != nil {
		t.logGetError(req, key, err)
		return key, nil, nil
	}
	if e.Status == 0 {
		body.Close()
		names, _ := varyFields(e.Header)
		key = variantKey(key, e.Variant, names, req.Header)
		if e, body, err = t.store.Get(key); err != nil {
			t.logGetError(req, key, err)
			return key, nil, nil
		}
	}
	names, star := varyFields(e.Header)
	if star {
		body.Close()
		return key, nil, nil
	}
	for _, n := range names {
		if varyValue(req.Header, n) != e.VaryValues[n] {
			body.Close()
			return key, nil, nil
		}
	}
	return key, e, body
}

func (t *Transport) logGetError(req *http.Request, key string, err error) {
	switch {
	case errors.Is(err, ErrNotFound):
	case errors.Is(err, ErrCorrupt):
		t.corrupt.Add(1)
		t.log.Warn("cache: corrupt entry removed, treated as a miss", "url", req.URL.String(), "err", err)
		t.o.Events.Emit(events.Event{Type: events.Notice, URL: req.URL.String(), Kind: kind.Of(req),
			Method: req.Method, Reason: "cache-corrupt", Detail: err.Error()})
	default:
		t.log.Debug("cache: store read failed, treated as a miss", "key", key, "err", err)
	}
}

// dateOf is the response's Date, or the time it was received when Date is absent or invalid.
func dateOf(e *Entry) time.Time {
	if d, ok := headerDate(e.Header, "Date"); ok {
		return d
	}
	return e.ResponseTime
}

// currentAge follows RFC 9111 §4.2.3.
func currentAge(e *Entry, now time.Time) time.Duration {
	ageValue, _ := parseAge(e.Header)
	apparent := max(0, e.ResponseTime.Sub(dateOf(e)))
	corrected := ageValue + e.ResponseTime.Sub(e.RequestTime)
	return max(apparent, corrected) + now.Sub(e.ResponseTime)
}

// lifetime is the freshness lifetime of RFC 9111 §4.2.1: max-age, else Expires − Date, else the
// heuristic of §4.2.2 for a heuristically cacheable status with Last-Modified. An invalid max-age
// or Expires makes the response stale rather than guessing (§4.2.1, §5.3).
func (t *Transport) lifetime(e *Entry) time.Duration {
	cc := parseCacheControl(e.Header.Values("Cache-Control"))
	if cc.has("max-age") {
		d, _ := cc.seconds("max-age")
		return d
	}
	if len(e.Header.Values("Expires")) > 0 {
		exp, ok := headerDate(e.Header, "Expires")
		if !ok {
			return 0
		}
		return max(0, exp.Sub(dateOf(e)))
	}
	if t.o.HeuristicFraction > 0 && (heuristicStatus[e.Status] || cc.has("public")) {
		if lm, ok := headerDate(e.Header, "Last-Modified"); ok {
			if since := dateOf(e).Sub(lm); since > 0 {
				return min(time.Duration(float64(since)*t.o.HeuristicFraction), t.o.HeuristicMax)
			}
		}
	}
	return 0
}

// heuristicStatus lists the status codes that are heuristically cacheable (RFC 9110 §15.1).
var heuristicStatus = map[int]bool{200: true, 203: true, 204: true, 206: true, 300: true, 301: true,
	308: true, 404: true, 405: true, 410: true, 414: true, 501: true}

// understoodStatus are the final status codes the cache may store with explicit freshness.
func understoodStatus(code int) bool {
	return code >= 200 && code < 600 && code != http.StatusPartialContent && code != http.StatusNotModified
}

// storable decides RFC 9111 §3 for a response to a GET.
func storable(req *http.Request, resp *http.Response) bool {
	if req.Method != http.MethodGet || !understoodStatus(resp.StatusCode) {
		return false
	}
	if requestDirectives(req.Header).has("no-store") {
		return false
	}
	cc := parseCacheControl(resp.Header.Values("Cache-Control"))
	// must-understand lets a cache that understands the status ignore no-store (§5.2.2.3).
	if cc.has("no-store") && !(cc.has("must-understand") && heuristicStatus[resp.StatusCode]) {
		return false
	}
	if _, star := varyFields(resp.Header); star {
		return false
	}
	if heuristicStatus[resp.StatusCode] || cc.has("public") || cc.has("private") {
		return true
	}
	if _, ok := cc.seconds("max-age"); ok {
		return true
	}
	return len(resp.Header.Values("Expires")) > 0
}

// hopByHop are the fields a cache must not store (RFC 9111 §3.1, RFC 9110 §7.6.1).
var hopByHop = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Transfer-Encoding",
	"Upgrade", "Proxy-Authenticate", "Proxy-Authentication-Info", "Proxy-Authorization", "Trailer"}

// storedHeader returns the fields of h that may be stored.
func storedHeader(h http.Header) http.Header {
	s := h.Clone()
	for _, line := range h.Values("Connection") {
		for _, n := range splitList(line) {
			s.Del(n)
		}
	}
	for _, n := range hopByHop {
		s.Del(n)
	}
	// Fields named by a qualified no-cache may not be reused without revalidation (§5.2.2.4);
	// not storing them is the simplest way to honour that.
	for _, n := range parseCacheControl(h.Values("Cache-Control")).fields("no-cache") {
		s.Del(n)
	}
	s.Del(StatusHeader)
	return s
}

// storable is storedHeader less the fields Options.OmitHeaders names.
func (t *Transport) storable(h http.Header) http.Header {
	s := storedHeader(h)
	for _, n := range t.o.OmitHeaders {
		s.Del(n)
	}
	return s
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

// keep reports resp as a miss and, when it is storable, tees its body into the store as the
// caller reads it.
func (t *Transport) keep(req *http.Request, resp *http.Response, reqTime, respTime time.Time) *http.Response {
	resp.Header.Del(StatusHeader)
	t.miss.Add(1)
	if storable(req, resp) {
		if w := t.startPut(req, resp, reqTime, respTime); w != nil {
			resp.Body = &teeBody{rc: resp.Body, w: w, log: t.log}
		}
	}
	resp.Header.Set(StatusHeader, Miss)
	return resp
}

// startPut writes the Vary index when the response varies and opens the body writer.
func (t *Transport) startPut(req *http.Request, resp *http.Response, reqTime, respTime time.Time) BodyWriter {
	e := &Entry{Status: resp.StatusCode, Header: t.storable(resp.Header), RequestTime: reqTime, ResponseTime: respTime,
		Size: resp.ContentLength}
	key := primaryKey(req.URL)
	names, _ := varyFields(resp.Header)
	if len(names) > 0 {
		e.VaryValues = map[string]string{}
		for _, n := range names {
			e.VaryValues[n] = varyValue(req.Header, n)
		}
		gen, err := t.varyIndex(key, resp.Header)
		if err != nil {
			t.log.Debug("cache: storing a Vary index failed", "key", key, "err", err)
			return nil
		}
		key = variantKey(key, gen, names, req.Header)
	}
	w, err := t.store.Put(key, e)
	if err != nil {
		if !errors.Is(err, ErrTooLarge) {
			t.log.Debug("cache: store write failed", "key", key, "err", err)
		}
		return nil
	}
	return w
}

// varyIndex makes sure the primary key holds a Vary index for these Vary fields and returns its
// generation. An index with the same fields is reused, so several variants live side by side.
func (t *Transport) varyIndex(key string, h http.Header) (string, error) {
	names, _ := varyFields(h)
	if old, body, err := t.store.Get(key); err == nil {
		body.Close()
		oldNames, _ := varyFields(old.Header)
		if old.Status == 0 && slices.Equal(oldNames, names) {
			return old.Variant, nil
		}
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	gen := hex.EncodeToString(b)
	idx := &Entry{Header: http.Header{"Vary": {strings.Join(names, ", ")}}, Variant: gen}
	w, err := t.store.Put(key, idx)
	if err != nil {
		return "", err
	}
	return gen, w.Commit()
}

// teeBody copies a response body into the store while the caller reads it; the entry is committed
// at EOF and discarded if the body fails or is closed early.
type teeBody struct {
	rc  io.ReadCloser
	w   BodyWriter
	log *slog.Logger
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 && b.w != nil {
		if _, werr := b.w.Write(p[:n]); werr != nil {
			b.w.Abort()
			b.w = nil
		}
	}
	if err != nil && b.w != nil {
		if err == io.EOF {
			if cerr := b.w.Commit(); cerr != nil && !errors.Is(cerr, ErrTooLarge) {
				b.log.Debug("cache: committing an entry failed", "err", cerr)
			}
		} else {
			b.w.Abort()
		}
		b.w = nil
	}
	return n, err
}

func (b *teeBody) Close() error {
	if b.w != nil {
		b.w.Abort()
		b.w = nil
	}
	return b.rc.Close()
}

// serve answers req from a stored response.
func (t *Transport) serve(req *http.Request, e *Entry, body io.ReadCloser, status string, now time.Time) *http.Response {
	h := e.Header.Clone()
	for _, n := range t.o.OmitHeaders {
		// Also for entries stored before the option was set (an older cache directory).
		h.Del(n)
	}
	h.Set("Age", strconv.FormatInt(int64(currentAge(e, now)/time.Second), 10))
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

// revalidate asks the origin whether the stored response e is still good (RFC 9111 §4.3.1),
// sending both validators it has. The stored response is never removed here: an error or an
// error status leaves it (and its validators) in place for the next attempt.
func (t *Transport) revalidate(req *http.Request, key string, e *Entry, rcc directives) (*http.Response, error) {
	creq := req.Clone(req.Context())
	etag, lm := e.Header.Get("ETag"), e.Header.Get("Last-Modified")
	if etag != "" {
		creq.Header.Set("If-None-Match", etag)
	}
	if lm != "" {
		creq.Header.Set("If-Modified-Since", lm)
	}
	conditional := etag != "" || lm != ""

	reqTime := t.o.Now()
	resp, err := t.next.RoundTrip(creq)
	if err != nil {
		disconnected := req.Context().Err() == nil
		if r := t.staleOnError(req, key, e, rcc, disconnected); r != nil {
			t.log.Debug("cache: serving stale after an error", "url", req.URL.String(), "err", err)
			return r, nil
		}
		return nil, err
	}
	respTime := t.o.Now()

	switch {
	case resp.StatusCode == http.StatusNotModified && conditional:
		drain(resp.Body)
		merged := mergeNotModified(e, t.storable(resp.Header), reqTime, respTime)
		if err := t.update(key, merged); err != nil {
			t.log.Debug("cache: updating after 304 failed", "key", key, "err", err)
		}
		if ne, body, err := t.store.Get(key); err == nil {
			return t.serve(req, ne, body, Revalidated, respTime), nil
		}
		// The stored body vanished between the 304 and now (evicted, or removed by another
		// process): ask again without validators rather than serve nothing.
		return t.fetch(req)
	case isErrorStatus(resp.StatusCode):
		if r := t.staleOnError(req, key, e, rcc, false); r != nil {
			drain(resp.Body)
			return r, nil
		}
		// Not stored over the good copy: the validators survive for the next attempt.
		resp.Header.Del(StatusHeader)
		resp.Header.Set(StatusHeader, Miss)
		t.miss.Add(1)
		return resp, nil
	case req.Method == http.MethodHead:
		resp.Header.Del(StatusHeader)
		resp.Header.Set(StatusHeader, Miss)
		t.miss.Add(1)
		return resp, nil
	}
	return t.keep(req, resp, reqTime, respTime), nil
}

func isErrorStatus(code int) bool {
	switch code {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// staleOnError serves e stale when stale-if-error (the response's, the request's, or
// Options.StaleIfError) covers its staleness and must-revalidate / no-cache do not forbid it.
func (t *Transport) staleOnError(req *http.Request, key string, e *Entry, rcc directives, disconnected bool) *http.Response {
	cc := parseCacheControl(e.Header.Values("Cache-Control"))
	if cc.has("must-revalidate") || cc.has("no-cache") {
		return nil
	}
	now := t.o.Now()
	staleness := currentAge(e, now) - t.lifetime(e)
	allowed := t.o.StaleIfError
	if disconnected {
		allowed = max(allowed, t.o.StaleOnDisconnect)
	}
	if d, ok := cc.seconds("stale-if-error"); ok {
		allowed = max(allowed, d)
	}
	if d, ok := rcc.seconds("stale-if-error"); ok {
		allowed = max(allowed, d)
	}
	if allowed <= 0 || staleness > allowed {
		return nil
	}
	ne, body, err := t.store.Get(key)
	if err != nil {
		return nil
	}
	return t.serve(req, ne, body, Stale, now)
}

// mergeNotModified applies a 304's header fields to the stored response (RFC 9111 §3.2, §4.3.4):
// every field replaces the stored one, except Content-Length (it describes the 304, not the
// stored body) and the fields that are never stored. The exchange's times replace the stored
// ones, so the age starts again from the 304.
// h holds the 304's storable fields (Transport.storable).
func mergeNotModified(e *Entry, h http.Header, reqTime, respTime time.Time) *Entry {
	m := e.clone()
	upd := h.Clone()
	upd.Del("Content-Length")
	for n, v := range upd {
		m.Header[n] = v
	}
	if len(h.Values("Age")) == 0 {
		m.Header.Del("Age")
	}
	if len(h.Values("Date")) == 0 {
		m.Header.Set("Date", respTime.UTC().Format(http.TimeFormat))
	}
	m.RequestTime, m.ResponseTime = reqTime, respTime
	return m
}

// update replaces the metadata stored under key, through [Updater] when the store has it, else by
// streaming the body into a new entry.
func (t *Transport) update(key string, e *Entry) error {
	if u, ok := t.store.(Updater); ok {
		return u.UpdateEntry(key, e)
	}
	_, body, err := t.store.Get(key)
	if err != nil {
		return err
	}
	defer body.Close()
	w, err := t.store.Put(key, e)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, body); err != nil {
		w.Abort()
		return err
	}
	return w.Commit()
}

// revalidateInBackground runs one revalidation of key at a time, detached from the caller's
// context (which ends when the caller has its stale response) but bounded by a minute.
func (t *Transport) revalidateInBackground(req *http.Request, key string, e *Entry, rcc directives) {
	if _, busy := t.inflight.LoadOrStore(key, true); busy {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(req.Context()), time.Minute)
	breq := req.Clone(ctx)
	go func() {
		defer t.inflight.Delete(key)
		defer cancel()
		resp, err := t.revalidate(breq, key, e, rcc)
		if err != nil {
			t.log.Debug("cache: background revalidation failed", "url", req.URL.String(), "err", err)
			return
		}
		// Reading to EOF commits a new full response to the store.
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		// No caller reads this response, so the door's report layer never sees it: report it
		// here, so the operator's cost is counted all the same.
		budget, _ := origin.BudgetKey(req.URL)
		t.o.Events.Emit(events.Event{Type: events.Response, URL: req.URL.String(), Origin: budget,
			Kind: kind.FromContext(req.Context()), Method: req.Method, Status: resp.StatusCode,
			Cache: StatusOf(resp), Bytes: n, Detail: "background revalidation (stale-while-revalidate)"})
	}()
}

// drain reads a small remainder of body so the connection can be reused, then closes it.
func drain(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, 4<<10)
	body.Close()
}
