package robots

// This file decides when an origin's robots.txt is fetched, how long it is kept and which rules
// are in force after a fetch fails (RFC 9309 §2.3.1, §2.4).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/politecrawl/etiquette/politeness/freshness"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// Defaults for the zero [Options].
const (
	DefaultMinTTL           = time.Hour
	DefaultMaxTTL           = 24 * time.Hour // RFC 9309 §2.4: a cached copy SHOULD NOT be used for more than 24 h
	DefaultFetchTimeout     = 30 * time.Second
	DefaultRetryFailedAfter = 30 * time.Second
	DefaultMaxOrigins       = 10000
)

// drainLimit is how much of an unread body is read before closing, so a slightly long answer
// can leave its connection reusable; a longer one is cut off by closing (never loaded).
const drainLimit = 64 << 10

// Fetch sends a robots.txt request and returns the response after redirects. The door passes
// one that enters the top of its stack (identified, cookie-free, cached, budgeted) and follows
// at most five redirects, returning an error beyond that (RFC 9309 §2.3.1.2). The keeper reads
// and closes the body.
type Fetch func(ctx context.Context, robotsURL string) (*http.Response, error)

// ClientFetch returns a Fetch that sends a GET with c (for tools and tests that have no door).
func ClientFetch(c *http.Client) Fetch {
	return func(ctx context.Context, robotsURL string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, robotsURL, nil)
		if err != nil {
			return nil, err
		}
		return c.Do(req)
	}
}

// Options configure a [Keeper]. The zero value gives the defaults.
type Options struct {
	// Now is the clock; nil means time.Now. Expiry arithmetic uses only this clock.
	Now func() time.Time
	// MinTTL and MaxTTL clamp a fetched robots.txt's lifetime, which is otherwise the
	// response's remaining freshness (Cache-Control max-age or Expires, less its age; none given
	// means MaxTTL). The floor keeps "max-age=0" from costing one robots.txt request per page.
	// The ceiling counts from when the origin sent the copy, not from when the keeper received
	// it: a copy a cache held for 20 hours is kept 4 more under the default 24 h (RFC 9309 §2.4).
	// 0 means 1 h and 24 h.
	MinTTL time.Duration
	MaxTTL time.Duration
	// FetchTimeout bounds one robots.txt fetch, body included. The fetch runs detached from the
	// callers waiting for it, so this is its only deadline. 0 means 30 s.
	FetchTimeout time.Duration
	// RetryFailedAfter is how long a failed fetch's outcome (complete disallow, or the last
	// good copy) is kept before the next attempt, and the least time any copy is kept; a fetch
	// that failed on this machine (out of file descriptors) is retried after
	// RetryLocalFailureAfter instead, when that is sooner. 0 means 30 s.
	RetryFailedAfter time.Duration
	// Store holds the entries; nil means a [MemoryStore] of MaxOrigins origins.
	Store Store
	// MaxOrigins bounds the origins the default store holds (see [MemoryStore]); 0 means
	// DefaultMaxOrigins. A dropped origin is fetched again when next needed; if that fetch fails
	// it is disallowed (its last good copy is gone), which errs on the polite side.
	MaxOrigins int
}

// Keeper fetches, caches and refreshes robots.txt per origin (scheme, host and port: RFC 9309
// §2.3). One keeper serves any number of doors; the door uses a process-wide one by default.
// Lookup is the method callers want. The zero value is ready to use with default [Options].
type Keeper struct {
	opts Options
	sf   singleflight.Group

	storeOnce sync.Once
	st        Store
}

// NewKeeper returns a keeper with opts.
func NewKeeper(opts Options) *Keeper {
	return &Keeper{opts: opts}
}

func (k *Keeper) now() time.Time {
	if k.opts.Now != nil {
		return k.opts.Now()
	}
	return time.Now()
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// store is Options.Store, or the default MemoryStore.
func (k *Keeper) store() Store {
	k.storeOnce.Do(func() {
		if k.st = k.opts.Store; k.st == nil {
			k.st = NewMemoryStore(k.opts.MaxOrigins)
		}
	})
	return k.st
}

// Lookup returns the entry for u's origin, fetching robots.txt with fetch when the keeper has
// no fresh entry. Concurrent lookups for one origin share a single fetch; each waits on its own
// ctx, and the fetch itself runs detached from every caller (with Options.FetchTimeout), so a
// cancelled caller neither fails the others nor leaves a false "disallow" behind.
//
// A failed fetch is not an error: the entry then disallows everything (or keeps the last good
// copy). Lookup fails only for a URL without an http(s) origin, a nil fetch, or when ctx ends
// before the entry is known.
func (k *Keeper) Lookup(ctx context.Context, u *url.URL, fetch Fetch) (*Entry, error) {
	key, err := robotsKey(u)
	if err != nil {
		return nil, fmt.Errorf("robots.txt cannot apply to this URL: %w", err)
	}
	if e := k.fresh(key); e != nil {
		return e, nil
	}
	if fetch == nil {
		return nil, errors.New("robots: Keeper.Lookup needs a Fetch to get " + key + "/robots.txt")
	}
	ch := k.sf.DoChan(key, func() (any, error) {
		return k.refresh(ctx, key, fetch), nil
	})
	select {
	case res := <-ch:
		return res.Val.(*Entry), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for %s/robots.txt: %w", key, context.Cause(ctx))
	}
}

// robotsKey is origin.RobotsKey, which does not accept a nil URL.
func robotsKey(u *url.URL) (string, error) {
	if u == nil {
		return "", origin.ErrNoHost
	}
	return origin.RobotsKey(u)
}

// fresh returns the stored entry of key while it has not expired, else nil.
func (k *Keeper) fresh(key string) *Entry {
	if e := k.store().Load(key); e != nil && k.now().Before(e.Expires) {
		return e
	}
	return nil
}

// refresh runs once per origin at a time in this process (singleflight), and across processes
// when the store is a Locker. ctx only lends its values.
func (k *Keeper) refresh(ctx context.Context, key string, fetch Fetch) *Entry {
	// A caller that found the entry stale may arrive just after another refresh finished.
	if e := k.fresh(key); e != nil {
		return e
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), orDefault(k.opts.FetchTimeout, DefaultFetchTimeout))
	defer cancel()
	if l, ok := k.store().(Locker); ok {
		if unlock, err := l.Lock(fctx, key); err == nil {
			defer unlock()
			// Another process may have fetched while this one waited.
			if e := k.fresh(key); e != nil {
				return e
			}
		}
	}
	robotsURL := key + "/robots.txt"
	sent := k.now()
	r := fetchOnce(fctx, robotsURL, fetch)

	now := k.now()
	e := &Entry{Origin: key, URL: robotsURL, Outcome: r.outcome, Status: r.status, Err: r.err, Fetched: now}
	answer := freshness.Response{Status: r.status, Header: r.header, RequestTime: sent, ResponseTime: now}
	switch r.outcome {
	case Parsed:
		e.File, e.Body, e.Good = r.file, r.body, now
		e.ETag, e.LastModified = r.header.Get("ETag"), r.header.Get("Last-Modified")
		e.Expires = now.Add(k.lifetime(answer))
	case Unavailable:
		e.Expires = now.Add(k.lifetime(answer))
	default:
		retry := orDefault(k.opts.RetryFailedAfter, DefaultRetryFailedAfter)
		if localFailure(r.err) {
			retry = min(retry, RetryLocalFailureAfter)
		}
		e.Expires = now.Add(retry)
		if prev := k.store().Load(key); prev != nil && prev.File != nil {
			// RFC 9309 §2.4: while robots.txt is unreachable the cached copy may be used,
			// even past 24 hours.
			e.File, e.Body, e.Good, e.Stale = prev.File, prev.Body, prev.Good, true
			e.ETag, e.LastModified = prev.ETag, prev.LastModified
		}
	}
	k.store().Save(e)
	return e
}

// lifetime is how long a robots.txt response received just now is kept: its remaining freshness
// (RFC 9111 §4.2), 0 for no-store and no-cache, MaxTTL when it states none; raised to MinTTL;
// and cut so that the copy is not used for more than MaxTTL after the origin sent it (RFC 9309
// §2.4), though kept at least RetryFailedAfter, the pace at which failures are retried.
func (k *Keeper) lifetime(r freshness.Response) time.Duration {
	lo, hi := orDefault(k.opts.MinTTL, DefaultMinTTL), orDefault(k.opts.MaxTTL, DefaultMaxTTL)
	age := r.Age(r.ResponseTime)
	cc := freshness.CacheControl(r.Header)
	ttl := hi
	switch {
	case cc.Has("no-store") || cc.Has("no-cache"):
		ttl = 0
	case r.Explicit(cc):
		ttl = r.Lifetime(cc, freshness.Heuristic{}) - age
	}
	ttl = min(max(ttl, lo), hi)
	return min(ttl, max(hi-age, orDefault(k.opts.RetryFailedAfter, DefaultRetryFailedAfter)))
}

type fetchResult struct {
	outcome Outcome
	status  int
	err     error
	file    *File
	body    []byte
	header  http.Header
}

// fetchOnce applies RFC 9309 §2.3.1 to one fetch.
func fetchOnce(ctx context.Context, robotsURL string, fetch Fetch) fetchResult {
	resp, err := fetch(ctx, robotsURL)
	if err != nil {
		if resp != nil && resp.Body != nil {
			resp.Body.Close()
		}
		// Network errors, timeouts and more than five redirects alike. For too many redirects
		// RFC 9309 §2.3.1.2 allows treating robots.txt as unavailable (allow all, Google's
		// reading); we treat it as unreachable: a redirect loop is a server fault, not a
		// statement that there are no rules, and the caller's error does not let us tell it
		// apart from a network failure reliably.
		return fetchResult{outcome: Unreachable, err: err}
	}
	defer closeBody(resp.Body)
	s := resp.StatusCode
	switch {
	case s >= 200 && s <= 299:
		body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBytes))
		if err != nil {
			// A partial body is not a successful download (RFC 9309 §2.3.1.1).
			return fetchResult{outcome: Unreachable, status: s, err: fmt.Errorf("reading the body: %w", err)}
		}
		if len(body) == MaxBytes {
			// Whatever follows is not parsed; one more byte, or a read error (the door's body
			// cap for robots.txt is MaxBytes), only tells Parse that the file was cut.
			var one [1]byte
			if n, err := io.ReadFull(resp.Body, one[:]); n > 0 || (err != nil && err != io.EOF) {
				body = append(body, '\n')
			}
		}
		return fetchResult{outcome: Parsed, status: s, file: Parse(body), body: body, header: resp.Header}
	case s == http.StatusTooManyRequests || s >= 500:
		// RFC 9309 §2.3.1.4 names 5xx; 429 is "come back later" too, and Google treats it so.
		return fetchResult{outcome: Unreachable, status: s}
	case s >= 400 && s <= 499:
		return fetchResult{outcome: Unavailable, status: s, header: resp.Header}
	default:
		// 1xx, a 3xx the client did not follow (no Location), anything else: not an answer
		// about rules, so the safe reading.
		return fetchResult{outcome: Unreachable, status: s, err: fmt.Errorf("unexpected status %d", s)}
	}
}

func closeBody(b io.ReadCloser) {
	if b == nil {
		return
	}
	_, _ = io.CopyN(io.Discard, b, drainLimit)
	_ = b.Close()
}

// Outcome classifies the last robots.txt fetch of an origin (RFC 9309 §2.3.1).
type Outcome int

// The outcomes.
const (
	// Parsed: a 2xx answer; its rules apply (§2.3.1.1).
	Parsed Outcome = iota + 1
	// Unavailable: a 4xx answer other than 429; nothing is restricted (§2.3.1.3).
	Unavailable
	// Unreachable: 429, 5xx, a network error, a timeout, more than five redirects, an
	// unexpected status; everything is disallowed unless a last good copy exists (§2.3.1.4, §2.4).
	Unreachable
)

func (o Outcome) String() string {
	switch o {
	case Parsed:
		return "parsed"
	case Unavailable:
		return "unavailable"
	case Unreachable:
		return "unreachable"
	}
	return "unknown"
}

// Entry is what the keeper knows about one origin's robots.txt: the outcome of the last fetch
// and the rules in force. It is immutable; a refresh replaces it. The zero value has not been
// fetched and disallows everything but /robots.txt.
type Entry struct {
	Origin  string    // scheme://host[:port]
	URL     string    // the robots.txt URL fetched
	Outcome Outcome   // of the last fetch
	Status  int       // HTTP status of the last fetch; 0 when there was no response
	Err     error     // why the last fetch failed, when it failed without a status
	Fetched time.Time // when the last fetch finished
	Expires time.Time // when the keeper fetches again
	// File is the robots.txt in force: the one just parsed, or the last good copy while Stale.
	// nil when no 2xx robots.txt applies.
	File *File
	// Body is the robots.txt File was parsed from (at most MaxBytes+1 bytes), kept so that a
	// [Store] outside the process can rebuild File with [Parse].
	Body []byte
	// ETag and LastModified are the validators of the response Body came with, "" when it had
	// none: what a conditional refresh of the copy would send.
	ETag, LastModified string
	// Stale reports that the last fetch failed and File is the last good copy (RFC 9309 §2.4).
	Stale bool
	// Good is when File was fetched.
	Good time.Time
}

// Decide reports whether token may fetch u under this entry: the rules of File when there is
// one (also when Stale), everything when robots.txt was unavailable (4xx), nothing but
// /robots.txt when it was unreachable.
func (e *Entry) Decide(token string, u *url.URL) Decision {
	if d, ok := robotsTxtItself(u); ok {
		return d
	}
	if e == nil {
		return Decision{Reason: "robots.txt has not been fetched: treating the origin as disallowed (RFC 9309 §2.3.1.4)"}
	}
	if e.File != nil {
		return e.noteStale(e.File.Decide(token, u))
	}
	switch e.Outcome {
	case Unavailable:
		return Decision{Allowed: true, Reason: "robots.txt answered " + strconv.Itoa(e.Status) +
			": there is no robots.txt, nothing is restricted (RFC 9309 §2.3.1.3)"}
	case Parsed, Unreachable:
		return Decision{Reason: e.failure() + ": treating the origin as disallowed until " + clock(e.Expires) +
			" (RFC 9309 §2.3.1.4)", Cause: e.cause()}
	}
	return Decision{Reason: "robots.txt has not been fetched: treating the origin as disallowed (RFC 9309 §2.3.1.4)"}
}

// noteStale adds to d's reason that it comes from the last good copy, when it does.
func (e *Entry) noteStale(d Decision) Decision {
	if e.Stale {
		d.Reason += "; from the copy fetched at " + clock(e.Good) + " because the refresh failed (" +
			e.failure() + ") (RFC 9309 §2.4)"
	}
	return d
}

// cause says why the last fetch failed: "answered 503", or the fetch's error.
func (e *Entry) cause() string {
	switch {
	case e.Status != 0 && e.Err != nil:
		return "answered " + strconv.Itoa(e.Status) + " (" + e.Err.Error() + ")"
	case e.Status != 0:
		return "answered " + strconv.Itoa(e.Status)
	case e.Err != nil:
		return e.Err.Error()
	}
	return "no answer"
}

// failure is cause as a sentence about robots.txt.
func (e *Entry) failure() string {
	if e.Status == 0 {
		return "robots.txt could not be fetched (" + e.cause() + ")"
	}
	return "robots.txt " + e.cause()
}

func clock(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// CrawlDelay returns the Crawl-delay for token from the robots.txt in force, if any.
func (e *Entry) CrawlDelay(token string) (time.Duration, bool) {
	if e == nil || e.File == nil {
		return 0, false
	}
	return e.File.CrawlDelay(token)
}

// Sitemaps returns the Sitemap URLs of the robots.txt in force, resolved against its URL,
// http(s) only, de-duplicated, in file order.
func (e *Entry) Sitemaps() []string {
	if e == nil || e.File == nil {
		return nil
	}
	base, err := url.Parse(e.URL)
	if err != nil {
		return nil
	}
	return e.File.Sitemaps(base)
}

// ErrDisallowed matches every [*DisallowedError] with errors.Is.
var ErrDisallowed = errors.New("robots.txt disallows the URL")

// DisallowedError is returned for a URL robots.txt disallows. Find it with errors.As; its
// Decision names the deciding line, or, when robots.txt could not be read and nothing may be
// fetched from the origin, the cause (Decision.Cause), which then leads the error's text.
type DisallowedError struct {
	URL      string
	Token    string
	Decision Decision
}

func (e *DisallowedError) Error() string {
	if e.Decision.Cause != "" {
		return "robots.txt unreachable (" + e.Decision.Cause + "); nothing is fetched from this origin until it can be read"
	}
	return "robots.txt disallows " + e.URL + " for " + quoteToken(e.Token) + ": " + e.Decision.Reason +
		"; this crawler must not fetch it"
}

// Is reports whether target is [ErrDisallowed].
func (e *DisallowedError) Is(target error) bool { return target == ErrDisallowed }
