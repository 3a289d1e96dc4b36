package main

// This file decides how a crawl reports its limits: once per origin and limit, with a count —
// a JSON line, a line of the summary and a figure of the report — never once per URL.

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"

	"github.com/politecrawl/etiquette/discovery/discovered"
	"github.com/politecrawl/etiquette/discovery/feeds"
	"github.com/politecrawl/etiquette/discovery/llms"
	"github.com/politecrawl/etiquette/discovery/plan"
	"github.com/politecrawl/etiquette/discovery/sitemap"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// pageLimitReason is the reason of the URLs --max-pages left unfetched.
const pageLimitReason = "not fetched: --max-pages reached"

// limit counts n things a limit held back on an origin.
func (o *crawlOutput) limit(originKey, kind, name, reason string, n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.limitLocked(originKey, kind, name, reason, n)
}

// limitLocked is limit with o.mu held.
func (o *crawlOutput) limitLocked(originKey, kind, name, reason string, n int) {
	k := limitKey{originKey, name}
	lc := o.limits[k]
	if lc == nil {
		lc = &limitCount{line: line{URL: originKey, Kind: kind, Refused: "limit", Limit: name, Reason: reason}}
		o.limits[k] = lc
	}
	lc.count += n
}

// flushLimits writes the line of every limit counted, sorted by origin and limit, counts them
// in the refusals and the report, and returns them. It requires o.mu held.
func (o *crawlOutput) flushLimits() []line {
	var out []line
	for _, lc := range o.limits {
		l := lc.line
		l.Count = lc.count
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b line) int { return cmp.Or(cmp.Compare(a.URL, b.URL), cmp.Compare(a.Limit, b.Limit)) })
	for _, l := range out {
		o.lines++
		o.refusals[l.Refused] += l.Count
		o.found.Limit(l.URL, l.Limit, l.Count)
		_ = o.enc.Encode(l)
	}
	clear(o.limits)
	return out
}

// originOf is the origin of rawURL (scheme, host and port), or rawURL when it has none.
func originOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL
	}
	key, err := origin.RobotsKey(u)
	if err != nil {
		return rawURL
	}
	return key
}

// discoveryLimitReason says, in the command's terms, what a discovery limit held back.
func discoveryLimitReason(l plan.Limit) string {
	var what string
	switch l.Reason {
	case discovered.ReasonOffOrigin:
		what = "discovered URLs neither on the origin that named them nor on a start origin, not fetched"
	case discovered.ReasonForeignSitemaps:
		what = fmt.Sprintf("robots.txt Sitemap lines past %d other origins, not fetched", discovered.DefaultForeignSitemapOrigins)
	case plan.ReasonPrivateNetwork:
		what = "discovered URLs of a public site at a private address, not fetched"
	case plan.ReasonDocuments:
		what = "discovery documents not requested: discovery reads at most --max-pages documents"
	case plan.ReasonPagesCovered:
		what = "listings stopped: the URLs queued cover --max-pages"
	case plan.ReasonRepeating:
		what = "listings stopped: a page of the listing brought nothing new"
	case plan.ReasonSitemapRepeated:
		what = "sitemap files met before (a loop or a repeat), not read again"
	case plan.ReasonSitemapTooDeep:
		what = "sitemap files nested deeper than three files, not read"
	case plan.ReasonSitemapFiles:
		what = "sitemap files past the 50,000 an origin's walk holds, not read"
	case plan.ReasonFeedEntries:
		what = fmt.Sprintf("feeds cut at %d entries: the entries before were queued, the rest not read", feeds.DefaultMaxEntries)
	case plan.ReasonSitemapEntries:
		what = fmt.Sprintf("sitemap files cut at %d URLs (sitemaps.org): the URLs before were queued, the rest not read", sitemap.DefaultMaxURLs)
	case plan.ReasonLLMsLinks:
		what = fmt.Sprintf("llms.txt links past the first %d of a file, not queued", llms.MaxLinks)
	case plan.ReasonDocumentSize:
		what = "discovery documents cut at their size cap: the URLs before the cut were queued"
	default:
		what = l.Reason
	}
	if l.Example != "" {
		return what + "; the first: " + l.Example
	}
	return what
}
