package plan

// This file decides how the crawl's own limits bound discovery — the requests in flight
// (Config.InFlight), the documents read for the pages the crawl may still fetch
// (Config.MaxDocuments, Config.PagesLeft) — and how every bound that held discovery back is
// counted: once per origin and reason, never once per URL.

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync/atomic"

	"github.com/politecrawl/etiquette/discovery/discovered"
	"github.com/politecrawl/etiquette/discovery/feeds"
	"github.com/politecrawl/etiquette/discovery/llms"
	"github.com/politecrawl/etiquette/discovery/sitemap"
	"github.com/politecrawl/etiquette/politeness"
)

// Reasons of a [Limit], besides discovered.ReasonOffOrigin and
// discovered.ReasonForeignSitemaps (the rule every discovered URL passes).
const (
	// ReasonPrivateNetwork: the door refused, at dial time, a discovered URL of a public site
	// that resolved to a private address (politeness.ErrPrivateNetwork).
	ReasonPrivateNetwork = "private-network"
	// ReasonDocuments: the crawl's discovery had read Config.MaxDocuments documents.
	ReasonDocuments = "max-documents"
	// ReasonPagesCovered: the URLs queued for the origin already cover the pages the crawl may
	// still fetch, so a listing (a WordPress REST listing, a feed) stopped.
	ReasonPagesCovered = "pages-covered"
	// ReasonRepeating: a WordPress REST listing page brought nothing that was not queued
	// before, so the listing stopped.
	ReasonRepeating = "listing-repeats"
	// ReasonSitemapRepeated, ReasonSitemapTooDeep, ReasonSitemapFiles: sitemap files not read
	// because the origin's walk had met them, they were nested deeper than three files, or the
	// walk held 50,000 files (sitemap.WalkRefusals).
	ReasonSitemapRepeated = "sitemap-repeated"
	ReasonSitemapTooDeep  = "sitemap-too-deep"
	ReasonSitemapFiles    = "sitemap-files"
	// ReasonFeedEntries: a feed listed more entries than feeds.DefaultMaxEntries (10,000);
	// its entries up to the cap were queued, the rest not read. Counted once per feed.
	ReasonFeedEntries = "feed-entries"
	// ReasonSitemapEntries: a sitemap file listed more entries than sitemaps.org allows
	// (sitemap.DefaultMaxURLs, 50,000); its entries up to the cap were queued, the rest not
	// read. Counted once per file.
	ReasonSitemapEntries = "sitemap-entries"
	// ReasonLLMsLinks: an llms.txt listed more links than llms.MaxLinks (10,000); the first
	// were queued. Counted once per link not kept.
	ReasonLLMsLinks = "llms-links"
	// ReasonDocumentSize: a discovery document was longer than its size cap (the door's body
	// cap of its kind, politeness.Policy.MaxBodyBytes, or its reader's); the entries before
	// the cap were queued. Counted once per document.
	ReasonDocumentSize = "document-size"
)

// ErrMaxDocuments is the error of a discovery request not sent because the crawl's discovery
// had read Config.MaxDocuments documents.
var ErrMaxDocuments = errors.New("plan: not requested: discovery has read as many documents as the crawl may fetch pages (Config.MaxDocuments)")

// Limit is one bound that held an origin's discovery back, and how often: URLs not requested,
// files not read, listings stopped.
type Limit struct {
	Origin  string // the origin discovered (origin.RobotsKey form)
	Reason  string // a Reason… constant of this package or of discovery/discovered
	Count   int    // how many times it held discovery back
	Example string // the first URL it held back
}

type limitKey struct{ origin, reason string }

// limit counts one thing a bound held back on origin.
func (p *Planner) limit(origin, reason, example string) { p.limitN(origin, reason, example, 1) }

// limitN counts n things a bound held back on origin.
func (p *Planner) limitN(origin, reason, example string, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.limits[limitKey{origin, reason}]
	if l == nil {
		l = &Limit{Origin: origin, Reason: reason, Example: example}
		p.limits[limitKey{origin, reason}] = l
	}
	l.Count += n
}

// cut counts err, the error of the reader of the document at docURL, as a limit of origin
// when a cap stopped the reading — the entries before it were queued all the same; over is
// the number of links the reader counted past its link cap (llms.txt). It reports whether a
// cap did. A document cut by a fault (malformed, a reset connection) is not a limit: its
// Document.Err says what happened.
func (p *Planner) cut(origin, docURL string, err error, over int) bool {
	capped := false
	if errors.Is(err, politeness.ErrBodyTooLarge) || errors.Is(err, feeds.ErrTooLarge) ||
		errors.Is(err, llms.ErrTooLarge) || errors.Is(err, sitemap.ErrTooLarge) {
		p.limit(origin, ReasonDocumentSize, docURL)
		capped = true
	}
	switch {
	case errors.Is(err, feeds.ErrCut):
		p.limit(origin, ReasonFeedEntries, docURL)
		capped = true
	case errors.Is(err, sitemap.ErrCut):
		p.limit(origin, ReasonSitemapEntries, docURL)
		capped = true
	case errors.Is(err, llms.ErrTooManyLinks):
		p.limitN(origin, ReasonLLMsLinks, docURL, max(over, 1))
		capped = true
	}
	return capped
}

// refused counts err, a discovery request's error, as a limit of origin when a bound caused it;
// it reports whether one did.
func (p *Planner) refused(origin, rawURL string, err error) bool {
	var out *discovered.OutOfReachError
	switch {
	case errors.As(err, &out):
		p.limit(origin, out.Reason, out.URL)
	case errors.Is(err, politeness.ErrPrivateNetwork):
		p.limit(origin, ReasonPrivateNetwork, rawURL)
	case errors.Is(err, ErrMaxDocuments):
		p.limit(origin, ReasonDocuments, rawURL)
	default:
		return false
	}
	return true
}

// limitsLocked returns the limits counted and those of the origins' sitemap walks, by origin
// and reason. It requires p.mu held.
func (p *Planner) limitsLocked() []Limit {
	var out []Limit
	for _, l := range p.limits {
		out = append(out, *l)
	}
	for _, op := range p.origins {
		op.mu.Lock()
		r := op.walk.Refused
		op.mu.Unlock()
		for _, c := range []struct {
			reason string
			n      int
		}{{ReasonSitemapRepeated, r.Repeated}, {ReasonSitemapTooDeep, r.TooDeep}, {ReasonSitemapFiles, r.OverLimit}} {
			if c.n > 0 {
				out = append(out, Limit{Origin: op.origin, Reason: c.reason, Count: c.n})
			}
		}
	}
	slices.SortFunc(out, func(a, b Limit) int {
		return cmp.Or(cmp.Compare(a.Origin, b.Origin), cmp.Compare(a.Reason, b.Reason))
	})
	return out
}

// documents counts the discovery documents requested against Config.MaxDocuments.
type documents struct {
	max  int64 // 0: no limit
	used atomic.Int64
}

// take reserves one document; false when the crawl's discovery has read its share.
func (d *documents) take() bool {
	if d.max <= 0 {
		return true
	}
	if d.used.Add(1) > d.max {
		d.used.Add(-1)
		return false
	}
	return true
}

// spent reports whether the crawl's discovery has read its share.
func (d *documents) spent() bool { return d.max > 0 && d.used.Load() >= d.max }

// acquire takes one of the crawl's requests in flight (Config.InFlight); release gives it back.
func (p *Planner) acquire(ctx context.Context) error {
	if p.inFlight == nil {
		return nil
	}
	return p.inFlight.Acquire(ctx, 1)
}

func (p *Planner) release() {
	if p.inFlight != nil {
		p.inFlight.Release(1)
	}
}
