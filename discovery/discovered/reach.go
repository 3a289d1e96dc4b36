package discovered

// This file decides which URLs the crawl may request when it did not get them from its user: a
// sitemap's location, a feed, an API, an alternate, an llms.txt link, a redirect target.

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
)

// DefaultForeignSitemapOrigins is the number of other origins whose sitemaps one origin's
// robots.txt may have the crawl read (sitemaps.org cross-submission: a site may keep its sitemaps
// on a CDN or a sitemap host). Two covers a site with its sitemaps on one CDN over http and https,
// or on a CDN and a sitemap service; a robots.txt naming more hosts gets the first two.
const DefaultForeignSitemapOrigins = 2

// Reasons a [Reach] refuses a URL, in [OutOfReachError].Reason.
const (
	// ReasonOffOrigin: the URL is neither on the origin that named it nor on a start origin.
	ReasonOffOrigin = "off-origin"
	// ReasonForeignSitemaps: a robots.txt Sitemap line on another origin, past the
	// foreign-origin allowance of the naming origin.
	ReasonForeignSitemaps = "foreign-sitemap-origins"
)

// ErrOutOfReach matches every *OutOfReachError with errors.Is.
var ErrOutOfReach = errors.New("discovered URL outside the crawl's reach")

// OutOfReachError is why a [Reach] refused a URL. Nothing was sent to it.
type OutOfReachError struct {
	URL     string // the URL refused, without userinfo
	NamedBy string // the URL of the document (or redirect) that named it
	Reason  string // ReasonOffOrigin or ReasonForeignSitemaps
	Limit   int    // with ReasonForeignSitemaps: the allowance
}

func (e *OutOfReachError) Error() string {
	if e.Reason == ReasonForeignSitemaps {
		return fmt.Sprintf("etiquette: not fetching %s, named by %s: the robots.txt already had the crawl read sitemaps on %d other origins, the most it may", e.URL, e.NamedBy, e.Limit)
	}
	return fmt.Sprintf("etiquette: not fetching %s, named by %s: it is neither on that origin nor on a start origin", e.URL, e.NamedBy)
}

func (e *OutOfReachError) Is(target error) bool { return target == ErrOutOfReach }

// Reach is the rule every URL the crawl did not get from its user passes before it is
// requested: its origin is the origin that named it, or the origin of a start URL — or, for a
// robots.txt Sitemap line only, one of at most ForeignSitemapOrigins other origins per naming
// origin (the entries of such a sitemap must still be on the naming origin: the planner's
// scope for them). The other half of the rule — from a public origin, nothing discovered is
// dialled at a private address — is checked by the door at dial time (politeness.NamedBy).
//
// Create one per crawl with [NewReach]; it is safe for concurrent use.
type Reach struct {
	starts  map[string]bool
	foreign int

	mu   sync.Mutex
	used map[string]map[string]bool // by naming origin: the other origins its Sitemap lines took
}

// NewReach returns the rule for a crawl that started on starts (URLs; those without an http(s)
// origin are ignored). foreignSitemapOrigins is the allowance per origin; 0 means
// DefaultForeignSitemapOrigins, a negative number none.
func NewReach(starts []string, foreignSitemapOrigins int) *Reach {
	r := &Reach{starts: map[string]bool{}, used: map[string]map[string]bool{}}
	switch {
	case foreignSitemapOrigins == 0:
		r.foreign = DefaultForeignSitemapOrigins
	case foreignSitemapOrigins > 0:
		r.foreign = foreignSitemapOrigins
	}
	for _, s := range starts {
		if key, err := OriginOf(strings.TrimSpace(s)); err == nil {
			r.starts[key] = true
		}
	}
	return r
}

// Check decides rawURL, named by the document or redirect at namedBy. sitemapLine says it is a
// robots.txt Sitemap line, which may take one of the naming origin's foreign allowance (the
// first origins met keep it). It returns nil or an *OutOfReachError; a URL without an http(s)
// origin is refused as off-origin. A nil Reach allows everything.
func (r *Reach) Check(namedBy, rawURL string, sitemapLine bool) error {
	if r == nil {
		return nil
	}
	refuse := func(reason string) error {
		shown := rawURL
		if u, err := url.Parse(rawURL); err == nil {
			shown = u.Redacted()
		}
		return &OutOfReachError{URL: shown, NamedBy: namedBy, Reason: reason, Limit: r.foreign}
	}
	target, err := OriginOf(rawURL)
	if err != nil {
		return refuse(ReasonOffOrigin)
	}
	namer, err := OriginOf(namedBy)
	if err == nil && namer == target || r.starts[target] {
		return nil
	}
	if !sitemapLine || err != nil {
		return refuse(ReasonOffOrigin)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	used := r.used[namer]
	if used[target] {
		return nil
	}
	if len(used) >= r.foreign {
		return refuse(ReasonForeignSitemaps)
	}
	if used == nil {
		used = map[string]bool{}
		r.used[namer] = used
	}
	used[target] = true
	return nil
}
