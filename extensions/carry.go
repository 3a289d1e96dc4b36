package extensions

// This file decides what becomes of the settings a collector had before Polite: each is carried
// into the door's Policy, refused with an error that names what to set instead, or — where the
// door must override it — said once at start (overrides.go).

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"reflect"
	"strings"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// Colly v2.3.0's defaults (Collector.Init): a collector holding them has not chosen otherwise.
const (
	collyDefaultAgent   = "colly - https://github.com/gocolly/colly"
	collyDefaultMaxBody = 10 * 1024 * 1024
)

// collectorSettings is what a collector had when Polite first read it.
type collectorSettings struct {
	transport    http.RoundTripper // the client's transport, nil when none (or Polite's own)
	hasClient    bool
	timeout      time.Duration // the client's Timeout (SetRequestTimeout; Colly's default 10 s)
	jar          http.CookieJar
	maxBody      int // MaxBodySize (0: no limit in Colly)
	cacheDir     string
	cacheExpiry  time.Duration
	userAgent    string
	ignoreRobots bool
	async        bool
	rules        []*colly.LimitRule
}

// readCollector reads c's settings. When Polite was called on c before (prev is that call's
// state), what that call replaced or reset is taken from what it read then, so a second Polite
// carries what the first did.
func readCollector(c *colly.Collector, client *http.Client, prev *guardState) collectorSettings {
	s := collectorSettings{maxBody: c.MaxBodySize, cacheDir: c.CacheDir, cacheExpiry: c.CacheExpiration,
		userAgent: c.UserAgent, ignoreRobots: c.IgnoreRobotsTxt, async: c.Async}
	s.rules, _ = limitRules(c)
	if client != nil {
		s.hasClient, s.transport, s.timeout, s.jar = true, client.Transport, client.Timeout, client.Jar
	}
	if prev == nil || client == nil || client.Transport != prev.transport {
		return s
	}
	if prev.refused != nil {
		s.transport = prev.settings.transport // only the transport was replaced
		return s
	}
	p := prev.settings
	p.async, p.rules = s.async, s.rules // Polite leaves these as they are
	return p
}

// carried is what Polite took from the collector that the collector's transport still needs.
type carried struct {
	maxBody int64 // the MaxBodySize the door caps bodies at; 0 when none was carried
	proxied bool  // the door's proxy is the collector's
}

// carry returns p with the collector's settings s carried into it, the effects to state at start
// for those the door replaces, or an error for a setting that cannot be carried.
func (s collectorSettings) carry(p politeness.Policy, logger *slog.Logger) (politeness.Policy, carried, []string, error) {
	var stated []string
	var out carried
	if err := s.carryTransport(&p); err != nil {
		return p, out, nil, err
	}
	if t, ok := s.transport.(*http.Transport); ok && t.Proxy != nil {
		out.proxied = true
	}
	if s.hasClient {
		limit := p.Timeout
		if limit <= 0 {
			limit = politeness.DefaultTimeout
		}
		switch {
		case s.timeout > 0 && s.timeout < limit:
			p.Timeout = s.timeout
		case s.timeout == 0:
			stated = append(stated, fmt.Sprintf("SetRequestTimeout(0), no limit in Colly: each exchange is bounded by %s from the origin's turn (Policy.Timeout)", limit))
		}
	}
	switch {
	case s.maxBody > 0 && s.maxBody != collyDefaultMaxBody:
		p.MaxBodyBytes, out.maxBody = capBodies(p.MaxBodyBytes, int64(s.maxBody)), int64(s.maxBody)
	case s.maxBody <= 0:
		stated = append(stated, fmt.Sprintf("MaxBodySize 0, no limit in Colly: a body is cut at the door's cap for its kind (%d MiB for a page) with an error (Policy.MaxBodyBytes)",
			politeness.DefaultMaxBodyBytes(kind.HTML)>>20))
	}
	if s.cacheDir != "" {
		said, err := s.carryCacheDir(&p, logger)
		if err != nil {
			return p, out, nil, err
		}
		stated = append(stated, said...)
	}
	said, err := s.carryCookies()
	if err != nil {
		return p, out, nil, err
	}
	return p, out, append(stated, said...), nil
}

// carryTransport carries a proxy or an *http.Transport the scraper set before Polite, which
// becomes the door's bottom; any other transport cannot sit below the door.
func (s collectorSettings) carryTransport(p *politeness.Policy) error {
	switch t := s.transport.(type) {
	case nil:
		return nil
	case *http.Transport:
		if t.Proxy != nil {
			if p.Proxy != nil {
				return errors.New("etiquette: the collector has a proxy (SetProxy or SetProxyFunc before Polite) and Policy.Proxy is set too; " +
					"Polite cannot tell whether the two choose the same proxy: remove the SetProxy/SetProxyFunc call, or leave Policy.Proxy nil and Polite carries the collector's")
			}
			p.Proxy = noteProxy(t.Proxy)
		}
		if !customTransport(t) {
			return nil // Colly's SetProxyFunc made it for the proxy alone
		}
		if p.BaseTransport != nil && p.BaseTransport != t {
			return errors.New("etiquette: the collector has an *http.Transport (WithTransport or SetClient before Polite) and Policy.BaseTransport is another; " +
				"the door has one bottom: remove the WithTransport/SetClient call, or leave Policy.BaseTransport nil and Polite carries the collector's")
		}
		p.BaseTransport = t
		return nil
	}
	return fmt.Errorf("etiquette: the collector's transport is a %T (WithTransport or SetClient before Polite); the door becomes the collector's transport "+
		"and sends through an *http.Transport of its own, so this one would not be used: pass your *http.Transport settings as Policy.BaseTransport "+
		"and a proxy as Policy.Proxy, and remove the call", s.transport)
}

// customTransport reports whether t sets anything but what Colly's SetProxyFunc sets on a
// transport it makes (Proxy, and DisableKeepAlives, which the door does not carry: it would open
// a connection to the site per request).
func customTransport(t *http.Transport) bool {
	v := reflect.ValueOf(t).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.IsExported() && f.Name != "Proxy" && f.Name != "DisableKeepAlives" && !v.Field(i).IsZero() {
			return true
		}
	}
	return false
}

// capBodies returns caps with every kind's cap lowered to limit, except robots.txt's: Colly never
// capped its robots.txt fetch, and RFC 9309 §2.5 asks for at least 500 KiB of it.
func capBodies(caps map[kind.Kind]int64, limit int64) map[kind.Kind]int64 {
	out := make(map[kind.Kind]int64, 7)
	for _, k := range []kind.Kind{kind.Sitemap, kind.LLMs, kind.Feed, kind.API, kind.HTML, kind.Other} {
		cur := caps[k]
		if cur <= 0 {
			cur = politeness.DefaultMaxBodyBytes(k)
		}
		out[k] = min(cur, limit)
	}
	if n, ok := caps[kind.Robots]; ok {
		out[kind.Robots] = n
	}
	return out
}

// carryCacheDir makes CacheDir the directory of the door's disk cache, and CacheExpiration its
// MinRevisit: the door answers from the cache for that long, as Colly did.
func (s collectorSettings) carryCacheDir(p *politeness.Policy, logger *slog.Logger) ([]string, error) {
	switch {
	case p.Mode == politeness.UserTriggered:
		return nil, fmt.Errorf("etiquette: the collector's CacheDir is %q, but a user-triggered collector keeps nothing past the session: clear c.CacheDir (colly.CacheDir) before UserTriggered", s.cacheDir)
	case p.NoCache:
		return nil, fmt.Errorf("etiquette: the collector's CacheDir is %q and Policy.NoCache is set: clear c.CacheDir (colly.CacheDir) before Polite, or unset Policy.NoCache and Polite keeps the door's cache there", s.cacheDir)
	case p.CacheStore != nil:
		return nil, fmt.Errorf("etiquette: the collector's CacheDir is %q and Policy.CacheStore is a %T; the door keeps one cache: clear c.CacheDir (colly.CacheDir) before Polite, or leave Policy.CacheStore nil and Polite keeps the door's cache in CacheDir", s.cacheDir, p.CacheStore)
	}
	var stated []string
	switch {
	case s.cacheExpiry > 0 && p.MinRevisit == 0:
		p.MinRevisit = s.cacheExpiry
	case s.cacheExpiry > 0 && p.MinRevisit != s.cacheExpiry:
		return nil, fmt.Errorf("etiquette: the collector's CacheExpiration is %s and Policy.MinRevisit is %s: set one of them", s.cacheExpiry, p.MinRevisit)
	case s.cacheExpiry <= 0:
		stated = append(stated, fmt.Sprintf("CacheDir %q holds the door's RFC 9111 cache: an answer is reused while fresh and then revalidated, not kept for ever as Colly's cache did, whose files there are not read (Policy.MinRevisit reuses answers longer)", s.cacheDir))
	}
	store, err := politeness.DiskCache(s.cacheDir, logger)
	if err != nil {
		return nil, fmt.Errorf("etiquette: the collector's CacheDir: %w (give colly.CacheDir a directory this process can write)", err)
	}
	p.CacheStore = store
	return stated, nil
}

// carryCookies refuses cookies already in Colly's jar: the door does not use the jar, so they
// would silently stop being sent. A jar Polite cannot list is said at start instead.
func (s collectorSettings) carryCookies() ([]string, error) {
	switch j := s.jar.(type) {
	case nil:
		return nil, nil
	case *cookiejar.Jar:
		held, ok := jarCookies(j)
		if !ok {
			return []string{"the collector's cookie jar could not be read: any cookie in it is not sent; the door sends a cookie only for a purpose declared in Policy.Cookies"}, nil
		}
		if len(held) == 0 {
			return nil, nil
		}
		names := make([]string, 0, 5)
		for i, h := range held {
			if i == 4 && len(held) > 5 {
				names = append(names, fmt.Sprintf("and %d more", len(held)-i))
				break
			}
			names = append(names, fmt.Sprintf("%s (%s%s)", h.name, h.domain, h.path))
		}
		return nil, fmt.Errorf("etiquette: Colly's cookie jar holds %s, set before Polite (SetCookies or an earlier visit); the door does not use Colly's jar, so they would not be sent. "+
			"The door keeps a cookie only for a purpose declared in Policy.Cookies (a login, a session), from the site's own Set-Cookie through the door: declare it, "+
			"or call c.DisableCookies() before Polite to go on without them", strings.Join(names, ", "))
	}
	return []string{fmt.Sprintf("the collector's cookie jar (%T, from SetStorage or SetCookieJar) is not used: the door sends a cookie only for a purpose declared in Policy.Cookies", s.jar)}, nil
}
