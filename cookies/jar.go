package cookies

// This file decides which cookies the jar keeps, for how long, and for which origin.

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/publicsuffix"

	"github.com/politecrawl/etiquette/internal/quietlog"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// Options tune a [Jar]. The zero value is what most callers want.
type Options struct {
	// Logger receives a debug record per refused cookie. Nil means warnings and errors only, on slog.Default().
	Logger *slog.Logger
	// Now is the jar's clock for lifetimes. Nil means time.Now.
	Now func() time.Time
	// MaxLifetime caps how long a kept cookie lives, whatever the server asked: every kept cookie
	// is a session cookie that also ends this long after it was set. Zero means DefaultMaxLifetime.
	MaxLifetime time.Duration
	// MaxPerOrigin caps the cookies kept per origin. Zero means DefaultMaxPerOrigin.
	MaxPerOrigin int
	// OnRefuse, when set, is called for every refusal (after the counter and the log record), for
	// example to put it on an event stream. It must be quick and must not call back into the jar.
	OnRefuse func(Refusal)
}

// Defaults for [Options].
const (
	DefaultMaxLifetime  = time.Hour
	DefaultMaxPerOrigin = 50 // RFC 6265 §6.1 asks user agents to keep at least 50 per domain
	MaxCookieSize       = 4096
)

// Refusal reasons that are not a category (for those, the reason is Category.String()).
const (
	ReasonPartitioned   = "partitioned"    // CHIPS cookies are for third-party embedding
	ReasonForeignDomain = "foreign-domain" // Domain attribute not domain-matching the URL's host, or a public suffix
	ReasonSameSiteNone  = "samesite-none"  // an allow-listed name we cannot classify, declared for cross-site use
	ReasonBadPrefix     = "bad-prefix"     // __Secure-/__Host- name without the attributes the prefix requires
	ReasonTooLarge      = "too-large"      // name plus value over MaxCookieSize
	ReasonLimit         = "limit"          // the origin already holds MaxPerOrigin cookies
	ReasonNoOrigin      = "no-origin"      // the URL has no http(s) origin
)

// Refusal describes one refused cookie. The cookie's value is never included.
type Refusal struct {
	Origin string // origin.RobotsKey of the URL that set it
	Name   string
	Reason string // a Category's String(), or one of the Reason constants
	Match  Match
}

// Jar is a strict, purpose-bound [http.CookieJar]: it keeps only the cookies its [Purpose]
// declares, as session cookies, in memory, one net/http/cookiejar per origin (scheme, host and
// port: net/http/cookiejar alone keys by host and would send an http://h:8080 cookie to
// https://h). Nothing it holds is ever written anywhere or returned to another origin, and no
// method exports its contents. Every refusal is logged at debug level and counted; read the counts
// with [Jar.Refused] or [Jar.RefusedSummary].
//
// Most callers create one with [NewJar] and hand it to the door (or set it as an http.Client's
// Jar). The zero value is a jar with the empty Purpose: it keeps nothing and counts every refusal.
// A nil *Jar keeps and returns nothing and counts nothing.
// A Jar is safe for concurrent use.
type Jar struct {
	rules keepRules
	opt   Options

	mu      sync.Mutex
	origins map[string]*originJar
	sweepAt int // len(origins) at which newOrigin next drops expired cookies and empty origins
	refused map[string]int
}

type originJar struct {
	cj   *cookiejar.Jar
	held map[cookieID]held
}

// cookieID identifies a stored cookie as RFC 6265 §5.3 step 11 does: name, domain and path.
type cookieID struct{ name, domain, path string }

type held struct {
	from     *url.URL // the URL that set it: deleting it again must compute the same domain and path
	domain   string   // the Domain attribute as sent ("" for host-only)
	path     string   // the Path attribute as sent ("" for the default path)
	deadline time.Time
}

// NewJar returns a jar that keeps what p declares, tuned by o (the zero Options are what most
// callers want). It fails, wrapping [ErrBadCategory] or [ErrBadAllow], for a category a purpose
// cannot declare and for an allow-list entry that is not a cookie name or names a cookie that is
// never kept (see [Purpose.Validate]).
func NewJar(p Purpose, o Options) (*Jar, error) {
	rules, err := p.compile()
	if err != nil {
		return nil, err
	}
	return &Jar{rules: rules, opt: o}, nil
}

func (j *Jar) now() time.Time {
	if j.opt.Now != nil {
		return j.opt.Now()
	}
	return time.Now()
}

func (j *Jar) logger() *slog.Logger {
	return quietlog.Or(j.opt.Logger)
}

// SetCookies implements http.CookieJar. It keeps the cookies of cs that the purpose needs, as
// session cookies of u's origin, and refuses (logs and counts) the rest. A cookie that deletes
// itself (Max-Age ≤ 0, or an Expires in the past) removes a kept cookie of that name and is
// otherwise ignored, not counted: it stores nothing.
func (j *Jar) SetCookies(u *url.URL, cs []*http.Cookie) { j.Store(u, cs) }

// Store is SetCookies that also returns the refusals, in the order of cs (nil when none), so
// that a caller can explain them; they are logged and counted as SetCookies does.
func (j *Jar) Store(u *url.URL, cs []*http.Cookie) (refused []Refusal) {
	if j == nil || len(cs) == 0 {
		return nil
	}
	key, err := origin.RobotsKey(u)
	host, herr := origin.Host(u)
	now := j.now()

	j.mu.Lock()
	defer j.mu.Unlock()
	if err != nil || herr != nil {
		for _, c := range cs {
			if c != nil {
				refused = append(refused, j.refuse(Refusal{Name: c.Name, Reason: ReasonNoOrigin, Match: Lookup(c.Name)}))
			}
		}
		return refused
	}
	oj := j.origins[key]
	if oj != nil {
		j.expire(oj, now)
	}
	for _, c := range cs {
		if c == nil {
			continue
		}
		m := Lookup(c.Name)
		deleting := c.MaxAge < 0 || (!c.Expires.IsZero() && !c.Expires.After(now))
		reason := j.decide(u, key, host, c, m)
		if deleting {
			if reason == "" && oj != nil {
				j.forget(oj, u, c)
			}
			continue
		}
		if reason == "" && oj != nil && len(oj.held) >= j.maxPerOrigin() {
			if _, replacing := oj.held[idOf(u, c)]; !replacing {
				reason = ReasonLimit
			}
		}
		if reason != "" {
			refused = append(refused, j.refuse(Refusal{Origin: key, Name: c.Name, Reason: reason, Match: m}))
			continue
		}
		if oj == nil {
			oj = j.newOrigin(key, now)
		}
		j.keep(oj, u, c, now)
	}
	return refused
}

// Keeps reports whether the purpose keeps a cookie named name for u's origin, by its name alone
// (a Cookie header has no attributes to check): the door uses it for a Cookie header the caller
// set itself. A nil jar keeps nothing.
func (j *Jar) Keeps(u *url.URL, name string) bool {
	key, err := origin.RobotsKey(u)
	return j != nil && err == nil && j.rules.keeps(key, Classify(name), name)
}

func (j *Jar) maxPerOrigin() int {
	if j.opt.MaxPerOrigin > 0 {
		return j.opt.MaxPerOrigin
	}
	return DefaultMaxPerOrigin
}

func (j *Jar) maxLifetime() time.Duration {
	if j.opt.MaxLifetime > 0 {
		return j.opt.MaxLifetime
	}
	return DefaultMaxLifetime
}

// decide returns "" to keep c, set from u (origin key, host), or the reason to refuse it.
// Category reasons come first, so the operator's summary says what kind of cookie a site tried
// to set.
func (j *Jar) decide(u *url.URL, key, host string, c *http.Cookie, m Match) string {
	if !j.rules.keeps(key, m.Category, c.Name) {
		return m.Category.String()
	}
	if c.Partitioned {
		return ReasonPartitioned
	}
	if c.Domain != "" && !sameSiteDomain(host, c.Domain) {
		return ReasonForeignDomain
	}
	if m.Category == Unknown && c.SameSite == http.SameSiteNoneMode {
		return ReasonSameSiteNone
	}
	if !prefixOK(u, c) {
		return ReasonBadPrefix
	}
	if len(c.Name)+len(c.Value) > MaxCookieSize {
		return ReasonTooLarge
	}
	return ""
}

// sameSiteDomain reports whether a Domain attribute may be accepted for host: it must
// domain-match the host (RFC 6265 §5.1.3), must not be a public suffix (§5.3 step 5), and on an
// IP address host must be the address itself.
func sameSiteDomain(host, domain string) bool {
	d := strings.ToLower(strings.TrimPrefix(domain, "."))
	if d == "" {
		return false
	}
	if d == host {
		return true
	}
	if net.ParseIP(host) != nil || !strings.HasSuffix(host, "."+d) {
		return false
	}
	ps, _ := publicsuffix.PublicSuffix(d)
	return ps != d
}

// prefixOK applies the cookie name prefixes of RFC 6265bis §4.1.3: "__Secure-" needs Secure and a
// secure origin; "__Host-" also needs no Domain and Path "/". Matched case-insensitively, as the
// draft asks.
func prefixOK(u *url.URL, c *http.Cookie) bool {
	secureOrigin := strings.EqualFold(u.Scheme, "https")
	switch {
	case hasPrefixFold(c.Name, "__Secure-"):
		return c.Secure && secureOrigin
	case hasPrefixFold(c.Name, "__Host-"):
		return c.Secure && secureOrigin && c.Domain == "" && c.Path == "/"
	}
	return true
}

func hasPrefixFold(s, p string) bool { return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) }

func (j *Jar) refuse(r Refusal) Refusal {
	if j.refused == nil {
		j.refused = map[string]int{}
	}
	j.refused[r.Reason]++
	j.logger().LogAttrs(context.Background(), slog.LevelDebug, "cookie refused",
		slog.String("origin", r.Origin), slog.String("name", r.Name), slog.String("reason", r.Reason),
		slog.String("category", r.Match.Category.String()), slog.String("rule", r.Match.Source.String()),
		slog.String("pattern", r.Match.Pattern), slog.String("platform", r.Match.Platform))
	if j.opt.OnRefuse != nil {
		j.opt.OnRefuse(r)
	}
	return r
}

// newOrigin adds an origin's cookiejar. Origins are only added here, so this is where memory
// grows: when the number of origins reaches sweepAt, expired cookies are dropped everywhere and
// origins left empty are forgotten, and sweepAt doubles from what remains (amortised constant
// work per origin, and memory bounded by the origins that set a kept cookie within MaxLifetime).
// Requires j.mu.
func (j *Jar) newOrigin(key string, now time.Time) *originJar {
	if j.origins == nil {
		j.origins = map[string]*originJar{}
	}
	if len(j.origins) >= j.sweepAt {
		for k, oj := range j.origins {
			j.expire(oj, now)
			if len(oj.held) == 0 {
				delete(j.origins, k)
			}
		}
		j.sweepAt = max(64, 2*len(j.origins))
	}
	// cookiejar.New fails only for options it does not get here.
	cj, _ := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
	oj := &originJar{cj: cj, held: map[cookieID]held{}}
	j.origins[key] = oj
	return oj
}

// keep stores c as a session cookie (no Expires, no Max-Age: net/http/cookiejar then never
// persists it and drops it with the jar) and records its deadline: the server's own expiry or the
// lifetime cap, whichever comes first.
func (j *Jar) keep(oj *originJar, u *url.URL, c *http.Cookie, now time.Time) {
	deadline := now.Add(j.maxLifetime())
	if c.MaxAge > 0 {
		deadline = minTime(deadline, now.Add(time.Duration(c.MaxAge)*time.Second))
	}
	if !c.Expires.IsZero() {
		deadline = minTime(deadline, c.Expires)
	}
	s := *c
	s.Expires, s.RawExpires, s.MaxAge, s.Raw, s.Unparsed = time.Time{}, "", 0, "", nil
	oj.cj.SetCookies(u, []*http.Cookie{&s})
	// cookiejar may still drop it (for example a Domain that is a public suffix on a host-only
	// URL); Cookies then simply does not return it, and held only bounds our bookkeeping.
	oj.held[idOf(u, c)] = held{from: u, domain: c.Domain, path: c.Path, deadline: deadline}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// forget deletes a kept cookie the server expired.
func (j *Jar) forget(oj *originJar, u *url.URL, c *http.Cookie) {
	id := idOf(u, c)
	h, ok := oj.held[id]
	if !ok {
		return
	}
	j.drop(oj, id, h)
}

func (j *Jar) drop(oj *originJar, id cookieID, h held) {
	oj.cj.SetCookies(h.from, []*http.Cookie{{Name: id.name, Domain: h.domain, Path: h.path, MaxAge: -1}})
	delete(oj.held, id)
}

// expire drops the cookies of oj whose deadline has passed. Requires j.mu.
func (j *Jar) expire(oj *originJar, now time.Time) {
	for id, h := range oj.held {
		if !now.Before(h.deadline) {
			j.drop(oj, id, h)
		}
	}
}

// idOf computes the identity net/http/cookiejar gives c when set from u: its domain (the Domain
// attribute, or the host) and its path (the Path attribute, or the default path of RFC 6265
// §5.1.4).
func idOf(u *url.URL, c *http.Cookie) cookieID {
	d := strings.ToLower(strings.TrimPrefix(c.Domain, "."))
	if d == "" {
		d, _ = origin.Host(u)
	}
	p := c.Path
	if p == "" || p[0] != '/' {
		p = u.Path // net/http/cookiejar derives the default path from u.Path too
		if i := strings.LastIndex(p, "/"); i <= 0 {
			p = "/"
		} else {
			p = p[:i]
		}
	}
	return cookieID{name: c.Name, domain: d, path: p}
}

// Cookies implements http.CookieJar: the kept cookies of u's origin that RFC 6265 §5.4 sends to u
// (path, Secure). It never returns another origin's cookies; for a URL without an http(s) origin it
// returns none.
func (j *Jar) Cookies(u *url.URL) []*http.Cookie {
	if j == nil {
		return nil
	}
	key, err := origin.RobotsKey(u)
	if err != nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	oj := j.origins[key]
	if oj == nil {
		return nil
	}
	j.expire(oj, j.now())
	if len(oj.held) == 0 {
		return nil
	}
	return oj.cj.Cookies(u)
}

// Refused returns a copy of the refusal counters: category names ("analytics", "consent",
// "unknown", …) and the Reason constants, each with how many cookies it refused.
func (j *Jar) Refused() map[string]int {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return maps.Clone(j.refused)
}

// RefusedSummary formats the counters for an operator, most frequent first:
// "analytics 3, consent 2, unknown 1". It returns "" when nothing was refused.
func (j *Jar) RefusedSummary() string {
	r := j.Refused()
	keys := slices.Collect(maps.Keys(r))
	slices.SortFunc(keys, func(a, b string) int {
		if r[a] != r[b] {
			return r[b] - r[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, r[k])
	}
	return strings.Join(parts, ", ")
}

var _ http.CookieJar = (*Jar)(nil)
