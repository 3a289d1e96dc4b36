package plan

// This file decides how the listings other than sitemaps are read: llms.txt, and what a start
// page advertises — feeds, the WordPress REST API, an API catalog, sitemaps, content alternates.

import (
	"cmp"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"time"

	"github.com/politecrawl/etiquette/discovery/discovered"
	"github.com/politecrawl/etiquette/discovery/feeds"
	"github.com/politecrawl/etiquette/discovery/links"
	"github.com/politecrawl/etiquette/discovery/llms"
	"github.com/politecrawl/etiquette/discovery/wprest"
	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// feedTypes are the rel=alternate media types read as feeds.
var feedTypes = map[string]bool{"application/rss+xml": true, "application/atom+xml": true, "application/feed+json": true}

// readLLMs reads /llms.txt, then /llms-full.txt when llms.txt links it or Options.LLMsFull asks.
func (op *originPlan) readLLMs(ctx context.Context) {
	llmsTxt := op.origin + "/llms.txt"
	file := op.readLLMsFile(ctx, llmsTxt, frontier.ViaConvention, op.origin+"/")
	full, via, namedBy := "", frontier.ViaLLMs, llmsTxt
	if file != nil {
		full = file.Full
	}
	if full == "" && op.p.opt.LLMsFull {
		full, via, namedBy = op.origin+"/llms-full.txt", frontier.ViaConvention, op.origin+"/"
	}
	if full != "" && op.allow(namedBy, full, false) && op.mayRead(full) {
		op.readLLMsFile(ctx, full, via, namedBy)
	}
}

// readLLMsFile reads one llms.txt-format file and queues its links, the Optional section last.
// A 404 is normal; a soft 404 yields nothing.
func (op *originPlan) readLLMsFile(ctx context.Context, rawURL, via, namedBy string) *llms.File {
	resp, err := op.get(ctx, rawURL, kind.LLMs, via, namedBy)
	if err != nil {
		op.p.log.Debug("plan: llms.txt could not be fetched", "url", rawURL, "err", err)
		return nil
	}
	defer done(resp)
	if !ok2xx(resp) {
		return nil
	}
	fileURL := resp.Request.URL.String()
	f, err := llms.Parse(resp.Body, fileURL, resp.Header.Get("Content-Type"))
	if err != nil {
		noteError(resp, err)
		op.p.log.Debug("plan: llms.txt not read in full", "url", rawURL, "err", err)
	}
	if f == nil {
		return nil
	}
	// A file cut at a cap still lists the links before the cut: they are queued below.
	op.p.cut(op.origin, fileURL, err, f.Dropped.OverLimit)
	for _, optional := range []bool{false, true} {
		for _, sec := range f.Sections {
			if sec.Optional != optional {
				continue
			}
			if optional && op.covered() {
				op.p.mu.Lock()
				op.p.sum.OptionalSkipped += len(sec.Links)
				op.p.mu.Unlock()
				continue
			}
			for _, l := range sec.Links {
				op.push(l.Loc, frontier.ViaLLMs, l.LastMod)
			}
		}
	}
	return f
}

// covered reports whether the crawl's pages left are already spoken for by the URLs the origin
// has waiting in the frontier: URLs queued after them would never be fetched. It uses the
// source's Low, so only the origin's run goroutine may call it.
func (op *originPlan) covered() bool {
	left := op.pagesLeft()
	if left < 0 {
		return false
	}
	if left == 0 {
		return true
	}
	select {
	case <-op.src.Low(left - 1):
		return false
	default:
		return true
	}
}

// mayRead reports whether one more document, at target, is worth reading: the crawl's discovery
// has not read Config.MaxDocuments, and the URLs queued for the origin do not cover the pages
// left. A document not read is counted in Summary.Limits.
func (op *originPlan) mayRead(target string) bool {
	switch {
	case op.p.docs.spent():
		op.p.limit(op.origin, ReasonDocuments, target)
		return false
	case op.covered():
		op.p.limit(op.origin, ReasonPagesCovered, target)
		return false
	}
	return true
}

// pagesLeft is Config.PagesLeft, or -1 without a page limit.
func (op *originPlan) pagesLeft() int {
	if op.p.left == nil {
		return -1
	}
	return op.p.left()
}

// advertisedLink is a typed link and the start page that advertised it.
type advertisedLink struct {
	page *url.URL
	link links.HeadLink
}

// readAdvertised reads what the start pages advertise, Link header first, then the head, each
// target once: feeds, the WordPress REST API, API catalogs, content alternates; rel=sitemap
// files join the walk.
func (op *originPlan) readAdvertised(ctx context.Context, pages []*Page) {
	var all []advertisedLink
	for _, pg := range pages {
		if pg == nil || pg.URL == nil {
			continue
		}
		for _, l := range append(headerLinks(pg.Header, pg.URL), pg.Head...) {
			all = append(all, advertisedLink{page: pg.URL, link: l})
		}
	}
	seen := map[string]bool{}
	feedsRead := 0
	for _, a := range all {
		l := a.link
		target := l.URL.String()
		if key := string(l.Rel) + " " + target; seen[key] {
			continue
		} else {
			seen[key] = true
		}
		if ctx.Err() != nil {
			return
		}
		page := a.page.String()
		switch l.Rel {
		case links.RelAlternate:
			mt, _, _ := mime.ParseMediaType(l.Type)
			switch {
			case feedTypes[mt] && feedsRead < op.p.opt.MaxFeeds:
				if op.allow(page, target, false) && op.mayRead(target) {
					feedsRead++
					op.readFeed(ctx, target, page)
				}
			case carries(a.page, l):
				op.push(target, frontier.ViaAlternate, time.Time{})
			}
		case links.RelWordPressAPI:
			if op.allow(page, target, false) && op.mayRead(target) {
				op.readWordPress(ctx, target, page)
			}
		case links.RelAPICatalog:
			if op.allow(page, target, false) && op.mayRead(target) {
				op.readCatalog(ctx, l.URL, page)
			}
		case links.RelSitemap:
			// sitemaps.org: a sitemap not named in robots.txt vouches only for its own directory,
			// so one on another origin lists nothing of this one.
			if key, err := origin.RobotsKey(l.URL); err == nil && key == op.origin {
				dir := *l.URL
				dir.Path, dir.RawPath, dir.RawQuery = path.Dir(l.URL.Path)+"/", "", ""
				op.addSitemap(sitemapFile{via: frontier.ViaLink, allowed: dir.String(), namedBy: page}, target, 1)
			}
		}
	}
}

// readFeed reads a feed the start page advertised and queues its entries as they stream in. A
// feed served from another start origin still vouches only for this one. With a page limit it
// reads no more entries than the pages left can use, and stops once the URLs queued for the
// origin cover them (Summary.Limits, ReasonPagesCovered); a feed cut at its entry or size cap
// keeps the entries before the cut (ReasonFeedEntries, ReasonDocumentSize).
func (op *originPlan) readFeed(ctx context.Context, rawURL, page string) {
	resp, err := op.get(ctx, rawURL, kind.Feed, frontier.ViaAlternate, page)
	if err != nil {
		op.p.log.Debug("plan: a feed could not be fetched", "url", rawURL, "err", err)
		return
	}
	defer done(resp)
	if !ok2xx(resp) {
		return
	}
	op.readFeedBody(resp, resp.Body, frontier.ViaFeed, op.origin)
}

// readFeedBody queues, found via via, the entries of the feed body of resp (an advertised feed,
// or a sitemap in feed form, decoded) that point inside allowed; see readFeed for where it stops.
func (op *originPlan) readFeedBody(resp *http.Response, body io.Reader, via, allowed string) {
	fileURL := resp.Request.URL.String()
	opt := feeds.Options{Allowed: allowed}
	budget := false // the entry cap is the pages left, not the feed's own
	if left := op.pagesLeft(); left > 0 && left < feeds.DefaultMaxEntries {
		opt.MaxEntries, budget = left, true
	}
	_, err := feeds.Each(body, fileURL, opt, func(u discovered.URL) error {
		op.push(u.Loc, via, u.LastMod)
		if op.covered() {
			return errStopListing
		}
		return nil
	})
	switch {
	case err == nil:
	case errors.Is(err, errStopListing), budget && errors.Is(err, feeds.ErrCut):
		op.p.limit(op.origin, ReasonPagesCovered, fileURL)
	default:
		noteError(resp, err)
		op.p.cut(op.origin, fileURL, err, 0)
		op.p.log.Debug("plan: a feed was read only in part, or not a feed", "url", fileURL, "err", err)
	}
}

// readWordPress lists the posts and pages of the WordPress REST API at root, advertised by page.
// A listing not offered (401, 403, 404) is left alone: the HTML crawl covers the site. A listing
// stops once the URLs queued for the origin cover the pages the crawl may still fetch, or when a
// whole page of it (wprest.PerPage entries in a row) brought nothing new — a site whose pages
// repeat, or whose X-WP-TotalPages claims more than it lists; with a page limit it requests at
// most one page more than the pages left can use.
func (op *originPlan) readWordPress(ctx context.Context, root, page string) {
	maxPages := op.p.opt.WordPressPages
	if left := op.pagesLeft(); left >= 0 {
		maxPages = min(cmp.Or(maxPages, wprest.DefaultMaxPages), left/wprest.PerPage+1)
	}
	stale := 0 // entries in a row that were not new
	_, err := wprest.List(withVia(ctx, op.origin, frontier.ViaAPI, page), op.p.client, root,
		wprest.Options{Allowed: op.origin, MaxPages: maxPages},
		func(u discovered.URL) error {
			if op.push(u.Loc, frontier.ViaWPRest, u.LastMod) {
				stale = 0
			} else if stale++; stale >= wprest.PerPage {
				op.p.limit(op.origin, ReasonRepeating, root)
				return errStopListing
			}
			if op.covered() {
				op.p.limit(op.origin, ReasonPagesCovered, root)
				return errStopListing
			}
			return nil
		})
	switch {
	case errors.Is(err, errStopListing):
	case errors.Is(err, wprest.ErrNotOffered):
		op.p.log.Info("plan: the WordPress REST API does not offer a listing; the HTML crawl covers it", "root", root, "err", err)
	case err != nil:
		op.p.log.Debug("plan: the WordPress REST API was read only in part", "root", root, "err", err)
	}
}

// errStopListing ends a WordPress REST listing that has brought what the crawl can use.
var errStopListing = errors.New("plan: listing stopped")

// readCatalog reads an API catalog (RFC 9727) a resource of the site referenced: the APIs it
// names are recorded, its HTML documentation pages queued.
func (op *originPlan) readCatalog(ctx context.Context, u *url.URL, page string) {
	resp, err := op.get(ctx, u.String(), kind.API, frontier.ViaAPI, page)
	if err != nil {
		op.p.log.Debug("plan: an API catalog could not be fetched", "url", u.String(), "err", err)
		return
	}
	defer done(resp)
	if !ok2xx(resp) {
		return
	}
	c, err := parseAPICatalog(resp.Body, resp.Request.URL, resp.Header.Get("Content-Type"))
	if err != nil {
		noteError(resp, err)
		op.p.mu.Lock()
		op.p.sum.APIs = append(op.p.sum.APIs, u.String())
		op.p.mu.Unlock()
		return
	}
	op.p.mu.Lock()
	op.p.sum.APIs = append(op.p.sum.APIs, c.APIs...)
	op.p.mu.Unlock()
	for _, d := range c.Docs {
		op.push(d.String(), frontier.ViaAPICatalog, time.Time{})
	}
}
