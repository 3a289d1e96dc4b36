package plan

// This file decides the order in which one origin's discovery documents are read, and how the
// URLs they list reach the frontier.

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/politecrawl/etiquette/discovery/sitemap"
	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// drainLimit is how much of a document's unread rest is read before closing, so that a short
// tail leaves the connection reusable; a longer one is cut off by closing.
const drainLimit = 4 << 10

// originPlan is the discovery of one origin. Its run goroutine is the only one that reads and
// changes the walk; mu guards what Summary reads from other goroutines.
type originPlan struct {
	p      *Planner
	origin string   // origin.RobotsKey form: "https://example.org"
	start  *url.URL // the first start URL of the origin
	starts int      // start URLs queued for it
	src    *frontier.Source

	// started receives a Page (or nil) per start page read; made by Begin with room for all.
	started chan *Page
	// released is closed when the origin's pages may go: what the start page advertised has
	// been read, or discovery ended early.
	released     chan struct{}
	releasedOnce sync.Once

	// With Config.Claims: the origin's start URLs, queued by pushStarts once this crawl claimed
	// the discovery or its holder released the origin; pushed says they were; claim is this
	// crawl's hold on the discovery, nil when another crawl holds it. Only run's goroutine uses
	// them.
	startURLs []string
	pushed    bool
	claim     Claim

	found int // URLs queued for the origin, guarded by p.mu
	// startLastMod holds, by normalised start URL, when a listing said the start page last
	// changed: the start URL was queued first, without a date. Guarded by p.mu.
	startLastMod map[string]time.Time

	mu    sync.Mutex
	walk  sitemap.Walk
	files []sitemapFile // the walk's pending files, in the walk's order
}

// run runs the origin's discovery — itself, or with Config.Claims in whichever crawl claims it —
// and closes the source when it returns.
func (op *originPlan) run(ctx context.Context) {
	defer op.src.Close()
	defer op.release()
	if op.p.claims != nil {
		op.follow(ctx)
		return
	}
	op.discover(ctx)
}

// discover reads the origin's documents in the package's discovery order, then waits for its
// queue to run low to read the remaining sitemap files. It reports whether it read everything
// (false: ctx ended first).
func (op *originPlan) discover(ctx context.Context) bool {
	p := op.p

	lines, err := op.robotsSitemaps(ctx)
	if err != nil {
		p.log.Debug("plan: the Sitemap lines of robots.txt could not be read", "origin", op.origin, "err", err)
	}
	robotsTxt := op.origin + "/robots.txt"
	for _, s := range lines {
		op.addSitemap(sitemapFile{via: frontier.ViaRobotsSitemap, allowed: op.origin, namedBy: robotsTxt, line: true}, s, 1)
	}
	if len(lines) == 0 && !p.opt.NoSitemapGuess {
		op.addSitemap(sitemapFile{via: frontier.ViaConvention, allowed: op.origin, namedBy: op.origin + "/"}, op.origin+"/sitemap.xml", 1)
	}
	op.readSitemaps(ctx)
	op.readLLMs(ctx)

	var pages []*Page
	if op.starts > 0 {
		op.src.Admit(op.starts)
		for range op.starts {
			select {
			case pg := <-op.started:
				pages = append(pages, pg)
			case <-ctx.Done():
				return false
			}
		}
	}
	op.readAdvertised(ctx, pages)
	select {
	case <-op.src.Low(p.opt.LowWater):
		op.readSitemaps(ctx) // files the start page named, while the origin's queue is short
	default:
	}
	op.release()
	op.releaseClaim(ctx)

	// The next file is read when the origin's queue runs low: below LowWater, and below the
	// pages the crawl may still fetch (see covered). Nothing more is read once the crawl's
	// discovery has read Config.MaxDocuments, or its pages are all fetched.
	for op.sitemapsLeft() > 0 && !p.docs.spent() {
		mark := p.opt.LowWater
		switch left := op.pagesLeft(); {
		case left == 0:
			return ctx.Err() == nil
		case left > 0:
			mark = min(mark, left-1)
		}
		select {
		case <-op.src.Low(mark):
			op.readSitemaps(ctx)
		case <-ctx.Done():
			return false
		}
	}
	return ctx.Err() == nil
}

// release lets the origin's pages go.
func (op *originPlan) release() {
	op.src.Release()
	op.releasedOnce.Do(func() { close(op.released) })
}

// robotsSitemaps reads the Sitemap lines of the origin's robots.txt, holding a unit of the
// crawl's requests in flight: the door may have to fetch robots.txt for it.
func (op *originPlan) robotsSitemaps(ctx context.Context) ([]string, error) {
	if err := op.p.acquire(ctx); err != nil {
		return nil, err
	}
	defer op.p.release()
	return op.p.sitemaps.Sitemaps(ctx, op.start)
}

// allow reports whether rawURL, named by the document at namedBy (sitemapLine: a robots.txt
// Sitemap line), passes the rule every discovered URL passes (discovered.Reach); a refusal is
// counted in Summary.Limits.
func (op *originPlan) allow(namedBy, rawURL string, sitemapLine bool) bool {
	err := op.p.reach.Check(namedBy, rawURL, sitemapLine)
	if err != nil {
		op.p.refused(op.origin, rawURL, err)
		op.p.log.Debug("plan: a discovered URL is outside the crawl's reach", "url", rawURL, "named_by", namedBy, "err", err)
	}
	return err == nil
}

// get requests a discovery document of kind k found via via, named by the document at namedBy,
// once it passed allow. The response's body reports the document when closed (see report.go);
// err is the client's error, already reported.
//
// The request's unit of Config.InFlight is taken here, before the client is called, and held
// across its redirect hops until the body is closed: an origin whose discovery waits for a unit
// then waits on a short stack, which matters when thousands of start origins wait at once (a
// unit taken inside the client's call, hop by hop, left each of them on a stack grown by it).
func (op *originPlan) get(ctx context.Context, rawURL string, k kind.Kind, via, namedBy string) (*http.Response, error) {
	release := sync.OnceFunc(op.p.release)
	req, err := http.NewRequestWithContext(context.WithValue(withVia(ctx, op.origin, via, namedBy), docKey{},
		docMark{via: via, origin: op.origin, release: release}), http.MethodGet, rawURL, nil)
	if err != nil {
		op.p.reportDocument(Document{URL: rawURL, Kind: k, FoundVia: via, Err: err})
		return nil, err
	}
	if err := op.p.acquire(ctx); err != nil {
		return nil, err
	}
	resp, err := op.p.client.Do(kind.Mark(req, k))
	if err != nil {
		release()
		return nil, err
	}
	return resp, nil
}

// done closes a document's body after reading a little of what is left.
func done(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, drainLimit)
	_ = resp.Body.Close()
}

// ok2xx reports whether resp is a 2xx answer.
func ok2xx(resp *http.Response) bool { return resp.StatusCode >= 200 && resp.StatusCode <= 299 }

// push offers a URL one of the origin's documents listed to the frontier, counting what became
// of it, and reports whether the frontier queued it. URLs off the origin are not queued: the
// crawl stays on the origins of its start URLs.
func (op *originPlan) push(loc, via string, lastMod time.Time) bool {
	u, err := url.Parse(loc)
	if err != nil {
		return false
	}
	if key, err := origin.RobotsKey(u); err != nil || key != op.origin {
		return false
	}
	p := op.p
	a, err := p.f.Push(frontier.Entry{URL: loc, Depth: 1, Via: via, LastMod: lastMod})
	if err != nil {
		p.log.Debug("plan: the frontier refused a discovered URL", "url", loc, "via", via, "err", err)
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch a {
	case frontier.Queued:
		p.sum.Found[via]++
		op.found++
	case frontier.Duplicate:
		p.sum.Duplicates[via]++
		if n, err := frontier.Normalize(loc); err == nil && !lastMod.IsZero() {
			if _, isStart := op.startLastMod[n]; isStart {
				op.startLastMod[n] = lastMod
			}
		}
	}
	return a == frontier.Queued
}

// queued returns the number of URLs queued for the origin so far.
func (op *originPlan) queued() int {
	op.p.mu.Lock()
	defer op.p.mu.Unlock()
	return op.found
}

// queueStart queues the start URL s (depth 1, found via start) and, when the frontier queued it,
// notes it as a start page whose listing date a sitemap may give; waitFor counts it among the
// start pages this plan waits for before it releases the origin. It returns the frontier's refusal.
func (op *originPlan) queueStart(s string, waitFor bool) error {
	a, err := op.p.f.Push(frontier.Entry{URL: s, Depth: 1, Via: frontier.ViaStart})
	if err != nil || a != frontier.Queued {
		return err
	}
	if waitFor {
		op.starts++
	}
	if n, err := frontier.Normalize(s); err == nil {
		op.p.mu.Lock()
		op.startLastMod[n] = time.Time{}
		op.p.mu.Unlock()
	}
	return nil
}
