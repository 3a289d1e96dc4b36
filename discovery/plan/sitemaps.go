package plan

// This file decides which sitemap files of an origin are read, when, and for which origin their
// entries count.

import (
	"context"
	"errors"
	"fmt"

	"github.com/politecrawl/etiquette/discovery/discovered"
	"github.com/politecrawl/etiquette/discovery/sitemap"
	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// sitemapFile is a sitemap file waiting to be read: how it was found, where its entries may
// point (sitemap.Options.Allowed), and what named it.
type sitemapFile struct {
	via     string
	allowed string
	namedBy string // the URL of the robots.txt, page or index that named the file
	line    bool   // named by a robots.txt Sitemap line
}

// addSitemap queues the sitemap file at rawURL, met at depth (robots.txt and pages name files at
// depth 1, an index its files at its own depth + 1), unless it is outside the crawl's reach
// (discovered.Reach) or the walk has met it or refuses it.
func (op *originPlan) addSitemap(file sitemapFile, rawURL string, depth int) {
	if !op.allow(file.namedBy, rawURL, file.line) {
		return
	}
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.walk.Add(rawURL, depth) {
		// The walk hands files out in the order it accepted them; files keeps that order.
		op.files = append(op.files, file)
	}
}

// nextSitemap takes the next file of the walk.
func (op *originPlan) nextSitemap() (sitemap.Pending, sitemapFile, bool) {
	op.mu.Lock()
	defer op.mu.Unlock()
	pending, ok := op.walk.Next()
	if !ok {
		return sitemap.Pending{}, sitemapFile{}, false
	}
	f := op.files[0]
	op.files = op.files[1:]
	return pending, f, true
}

func (op *originPlan) sitemapsLeft() int {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.walk.Len()
}

// readSitemaps reads files until more than LowWater URLs have been queued by this call, the
// URLs queued for the origin cover the pages the crawl may still fetch, or no file is left: the
// next file is read only when the origin's queue runs low again.
func (op *originPlan) readSitemaps(ctx context.Context) {
	before := op.queued()
	for ctx.Err() == nil && op.queued()-before <= op.p.opt.LowWater && !op.covered() && !op.p.docs.spent() {
		pending, file, ok := op.nextSitemap()
		if !ok {
			return
		}
		op.readSitemap(ctx, pending, file)
	}
}

// readSitemap reads one file: a urlset's or a text file's pages are queued, an index's files are
// added to the walk, a feed's entries are queued like a sitemap's.
func (op *originPlan) readSitemap(ctx context.Context, pending sitemap.Pending, file sitemapFile) {
	resp, err := op.get(ctx, pending.URL, kind.Sitemap, file.via, file.namedBy)
	if err != nil {
		op.p.log.Debug("plan: a sitemap could not be fetched", "url", pending.URL, "err", err)
		return
	}
	defer done(resp)
	if !ok2xx(resp) {
		return
	}
	fileURL := resp.Request.URL.String()
	f, err := sitemap.Open(resp.Body, fileURL, sitemap.Options{Allowed: file.allowed})
	if err != nil {
		noteError(resp, err)
		op.p.log.Debug("plan: not a sitemap", "url", fileURL, "err", err)
		return
	}
	var res sitemap.Result
	switch f.Format {
	case sitemap.Feed:
		op.readFeedBody(resp, f.Body(), frontier.ViaSitemap, file.allowed)
		return
	case sitemap.Index:
		res, err = f.Each(func(u discovered.URL) error {
			op.addSitemap(sitemapFile{via: frontier.ViaSitemapIndex, allowed: file.allowed, namedBy: fileURL}, u.Loc, pending.Depth+1)
			return nil
		})
	default:
		res, err = f.Each(func(u discovered.URL) error {
			op.push(u.Loc, frontier.ViaSitemap, u.LastMod)
			return nil
		})
	}
	if err == nil && res.Dropped.Total() > 0 {
		err = fmt.Errorf("sitemap %s: %d entries dropped (%d off scope, %d invalid, %d too long): %w",
			fileURL, res.Dropped.Total(), res.Dropped.OffScope, res.Dropped.Invalid, res.Dropped.TooLong, ErrEntriesDropped)
	}
	if err != nil {
		// The entries before a cut were queued as they streamed in; a cap that cut the file is
		// a limit of the origin.
		noteError(resp, err)
		op.p.cut(op.origin, fileURL, err, 0)
		op.p.log.Debug("plan: a sitemap was read only in part", "url", fileURL, "err", err)
	}
}

// ErrEntriesDropped is wrapped by a Document's Err when the document was read to its end but
// some of its entries were not kept (another origin, not a URL, too long); the error counts
// them by reason.
var ErrEntriesDropped = errors.New("entries not kept")
