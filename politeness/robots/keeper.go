package robots

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

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
	// response's freshness (Cache-Control max-age, Expires; none given means MaxTTL). The floor
	// keeps "max-age=0" from costing one robots.txt request per page. 0 means 1 h and 24 h.
	MinTTL time.Duration
	MaxTTL time.Duration
	// FetchTimeout bounds one robots.txt fetch, body included. The fetch runs detached from the
	// callers waiting for it, so this is its only deadline. 0 means 30 s.
	FetchTimeout time.Duration
	// RetryFailedAfter is how long a failed fetch's outcome (complete disallow, or the last
	// good copy) is kept before the next attempt. 0 means 30 s.
	RetryFailedAfter time.Duration
	// MaxOrigins bounds the origins held, so a process-wide keeper on a broad crawl does not
	// grow without end; 0 means DefaultMaxOrigins. Beyond it, expired entries are dropped
	// first, then any. A dropped origin is fetched again when next needed; if that fetch fails
	// it is disallowed (its last good copy is gone), which errs on the polite side.
	MaxOrigins int
}

// Keeper fetches, caches and refreshes robots.txt per origin (scheme, host and port: RFC 9309
// §2.3). One keeper serves any number of doors; the door uses a process-wide one by default.
// Lookup is the method callers want. The zero value is ready to use with default [Options].
type Keeper struct {
	opts Options
	sf   singleflight.Group

	mu      sync.Mutex
	entries map[string]*Entry // by origin.RobotsKey
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

// Cached returns the entry held for u's origin, fresh or not, without fetching.
func (k *Keeper) Cached(u *url.URL) (*Entry, bool) {
	key, err := robotsKey(u)
	if err != nil {
		return nil, false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	e, ok := k.entries[key]
	return e, ok
}

// Forget drops what the keeper holds for u's origin; the next Lookup fetches again.
func (k *Keeper) Forget(u *url.URL) {
	key, err := robotsKey(u)
	if err != nil {
		return
	}
	k.mu.Lock()
	delete(k.entries, key)
	k.mu.Unlock()
}

// robotsKey is origin.RobotsKey, which does not accept a nil URL.
func robotsKey(u *url.URL) (string, error) {
	if u == nil {
		return "", origin.ErrNoHost
	}
	return origin.RobotsKey(u)
}

func (k *Keeper) fresh(key string) *Entry {
	k.mu.Lock()
	e := k.entries[key]
	k.mu.Unlock()
	if e != nil && k.now().Before(e.Expires) {
		return e
	}
	return nil
}

// refresh runs once per origin at a time (singleflight). ctx only lends its values.
func (k *Keeper) refresh(ctx context.Context, key string, fetch Fetch) *Entry {
	// A caller that found the entry stale may arrive just after another refresh finished.
	if e := k.fresh(key); e != nil {
		return e
	}
	robotsURL := key + "/robots.txt"
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), orDefault(k.opts.FetchTimeout, DefaultFetchTimeout))
	defer cancel()
	r := k.fetchOnce(fctx, robotsURL, fetch)

	now := k.now()
	e := &Entry{Origin: key, URL: robotsURL, Outcome: r.outcome, Status: r.status, Err: r.err, Fetched: now}
	switch r.outcome {
	case Parsed:
		e.File, e.Good = r.file, now
		e.Expires = now.Add(k.clamp(r.ttl))
	case Unavailable:
		e.Expires = now.Add(k.clamp(r.ttl))
	default:
		e.Expires = now.Add(orDefault(k.opts.RetryFailedAfter, DefaultRetryFailedAfter))
		k.mu.Lock()
		prev := k.entries[key]
		k.mu.Unlock()
		if prev != nil && prev.File != nil {
			// RFC 9309 §2.4: while robots.txt is unreachable the cached copy may be used,
			// even past 24 hours.
			e.File, e.Good, e.Stale = prev.File, prev.Good, true
		}
	}
	if e.File != nil {
		base, _ := url.Parse(robotsURL)
		e.sitemaps = e.File.Sitemaps(base)
	}
	k.mu.Lock()
	if k.entries == nil {
		k.entries = make(map[string]*Entry)
	}
	k.entries[key] = e
	k.evict(key, now)
	k.mu.Unlock()
	return e
}

// evict keeps the number of origins within MaxOrigins, sparing keep. Requires k.mu held.
func (k *Keeper) evict(keep string, now time.Time) {
	limit := k.opts.MaxOrigins
	if limit <= 0 {
		limit = DefaultMaxOrigins
	}
	if len(k.entries) <= limit {
		return
	}
	for key, e := range k.entries {
		if key != keep && !now.Before(e.Expires) {
			delete(k.entries, key)
		}
	}
	// Still full of fresh entries: drop some at random, down to 90 %, so that the next
	// insertions do not each pay for a sweep.
	for key := range k.entries {
		if len(k.entries) <= limit*9/10 {
			break
		}
		if key != keep {
			delete(k.entries, key)
		}
	}
}

func (k *Keeper) clamp(ttl time.Duration) time.Duration {
	lo, hi := orDefault(k.opts.MinTTL, DefaultMinTTL), orDefault(k.opts.MaxTTL, DefaultMaxTTL)
	if ttl < 0 || ttl > hi {
		return hi
	}
	if ttl < lo {
		return lo
	}
	return ttl
}

type fetchResult struct {
	outcome Outcome
	status  int
	err     error
	file    *File
	ttl     time.Duration // -1: the response gave no freshness
}

// fetchOnce applies RFC 9309 §2.3.1 to one fetch.
func (k *Keeper) fetchOnce(ctx context.Context, robotsURL string, fetch Fetch) fetchResult {
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
		body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBytes+1))
		if err != nil {
			// A partial body is not a successful download (RFC 9309 §2.3.1.1).
			return fetchResult{outcome: Unreachable, status: s, err: fmt.Errorf("reading the body: %w", err)}
		}
		return fetchResult{outcome: Parsed, status: s, file: Parse(body), ttl: freshness(resp.Header, k.now())}
	case s == http.StatusTooManyRequests || s >= 500:
		// RFC 9309 §2.3.1.4 names 5xx; 429 is "come back later" too, and Google treats it so.
		return fetchResult{outcome: Unreachable, status: s}
	case s >= 400 && s <= 499:
		return fetchResult{outcome: Unavailable, status: s, ttl: freshness(resp.Header, k.now())}
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

// freshness returns the response's freshness lifetime (RFC 9111 §4.2.1) from Cache-Control
// max-age (less Age) or Expires, 0 for no-store/no-cache, -1 when the response gives none.
func freshness(h http.Header, now time.Time) time.Duration {
	for _, v := range h.Values("Cache-Control") {
		for _, d := range strings.Split(v, ",") {
			name, val, _ := strings.Cut(strings.TrimSpace(d), "=")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "no-store", "no-cache":
				return 0
			case "max-age":
				secs, err := strconv.ParseInt(strings.Trim(strings.TrimSpace(val), `"`), 10, 64)
				if err != nil || secs < 0 {
					return 0
				}
				if age, err := strconv.ParseInt(strings.TrimSpace(h.Get("Age")), 10, 64); err == nil && age > 0 {
					secs -= age
				}
				secs = min(secs, 1<<32) // far beyond any clamp, and no Duration overflow
				return time.Duration(secs) * time.Second
			}
		}
	}
	if exp := h.Get("Expires"); exp != "" {
		t, err := http.ParseTime(exp)
		if err != nil {
			return 0 // RFC 9111 §5.3: an invalid Expires means already expired
		}
		date := now
		if d, err := http.ParseTime(h.Get("Date")); err == nil {
			date = d
		}
		return t.Sub(date)
	}
	return -1
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
	// Stale reports that the last fetch failed and File is the last good copy (RFC 9309 §2.4).
	Stale bool
	// Good is when File was fetched.
	Good time.Time

	sitemaps []string
}

// Decide reports whether token may fetch u under this entry: the rules of File when there is
// one (also when Stale), everything when robots.txt was unavailable (4xx), nothing but
// /robots.txt when it was unreachable.
func (e *Entry) Decide(token string, u *url.URL) Decision {
	if requestTarget(u) == "/robots.txt" {
		return Decision{Allowed: true, Reason: "/robots.txt is always allowed (RFC 9309 §2.2.2)"}
	}
	if e == nil {
		return Decision{Reason: "robots.txt has not been fetched: treating the origin as disallowed (RFC 9309 §2.3.1.4)"}
	}
	if e.File != nil {
		d := e.File.Decide(token, u)
		if e.Stale {
			d.Reason += "; from the copy fetched at " + clock(e.Good) + " because the refresh failed (" +
				e.failure() + ") (RFC 9309 §2.4)"
		}
		return d
	}
	switch e.Outcome {
	case Unavailable:
		return Decision{Allowed: true, Reason: "robots.txt answered " + strconv.Itoa(e.Status) +
			": there is no robots.txt, nothing is restricted (RFC 9309 §2.3.1.3)"}
	case Parsed, Unreachable:
		return Decision{Reason: e.failure() + ": treating the origin as disallowed until " + clock(e.Expires) +
			" (RFC 9309 §2.3.1.4)"}
	}
	return Decision{Reason: "robots.txt has not been fetched: treating the origin as disallowed (RFC 9309 §2.3.1.4)"}
}

func (e *Entry) failure() string {
	switch {
	case e.Status != 0 && e.Err != nil:
		return "robots.txt answered " + strconv.Itoa(e.Status) + " (" + e.Err.Error() + ")"
	case e.Status != 0:
		return "robots.txt answered " + strconv.Itoa(e.Status)
	case e.Err != nil:
		return "robots.txt could not be fetched (" + e.Err.Error() + ")"
	}
	return "robots.txt could not be fetched"
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
	if e == nil {
		return nil
	}
	return e.sitemaps
}

// ErrDisallowed matches every [*DisallowedError] with errors.Is.
var ErrDisallowed = errors.New("robots.txt disallows the URL")

// DisallowedError is returned for a URL robots.txt disallows. Find it with errors.As; its
// Decision names the deciding line.
type DisallowedError struct {
	URL      string
	Token    string
	Decision Decision
}

func (e *DisallowedError) Error() string {
	return "robots.txt disallows " + e.URL + " for " + quoteToken(e.Token) + ": " + e.Decision.Reason +
		"; this crawler must not fetch it"
}

// Is reports whether target is [ErrDisallowed].
func (e *DisallowedError) Is(target error) bool { return target == ErrDisallowed }
