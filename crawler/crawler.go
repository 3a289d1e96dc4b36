// Package crawler runs a crawl: a fixed number of workers take URLs from a frontier, fetch them
// through an http.Client (normally the door's), read HTML bodies through discovery/links as they
// stream, queue the links in scope one level deeper, and report what became of every URL.
//
// It is for a Go program that crawls without Colly (a Colly scraper uses extensions.Polite and,
// for discovery, extensions.Discover). Make a door with politeness.NewDoor, then call [Run] with
// a [Config] whose Client is the door's client and whose Start lists the start URLs; the
// [Summary] it returns, and the door's events turned into a report by package report, say what
// the crawl did. Package frontier holds the URLs (its Frontier can be shared through redisstore).
//
// With Config.Discovery, each start origin's sitemaps, llms.txt, feeds and APIs are read first
// (discovery/plan, which documents the order): the URLs they list are queued as they stream in,
// the start page is fetched after the sitemaps and llms.txt, and the origin's other pages only
// once what the start page advertises has been read. Discovery documents are reported too, and
// do not count toward MaxPages; but the crawl's limits bound them: Workers is the number of
// requests in flight, pages and discovery documents together, and with MaxPages discovery reads
// at most MaxPages documents, and none more for an origin once the URLs it queued for it cover
// the pages left (plan.Config.MaxDocuments, plan.Config.PagesLeft).
//
// The run ends when nothing is queued and no worker is busy — not at the first moment the queue
// is empty, since a page being read may still bring links — or when its context ends, MaxPages
// pages have been fetched, or the frontier fails. URLs still queued then are reported too, with
// [ErrInterrupted] or [ErrPageLimit]: none is lost silently.
//
// Memory stays flat whatever the pages hold: the workers are fixed (no goroutine per link), a
// body is never held whole (links are taken from the token stream), and a queued URL costs the
// frontier less than its own length (63–76 bytes for URLs of 80).
package crawler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/politecrawl/etiquette/discovery/links"
	"github.com/politecrawl/etiquette/discovery/plan"
	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/internal/quietlog"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// DefaultWorkers is the number of requests in progress at once, across all origins, when
// Config.Workers is 0. The door keeps each origin to its own limit (2 in flight, 3 starts per
// second); 16 lets a crawl of many origins use that budget without a goroutine per URL.
const DefaultWorkers = 16

// DefaultLastmodTrust is how long a listing's date is believed when Config.LastmodTrust is 0: a
// week, after which a stored page is revalidated whatever its sitemap says, because sitemap
// generators get lastmod wrong.
const DefaultLastmodTrust = 7 * 24 * time.Hour

// ErrInterrupted is the error reported for a URL still queued when the run's context ended
// (or the frontier failed): it was not fetched.
var ErrInterrupted = errors.New("crawler: not fetched: the crawl was interrupted")

// ErrPageLimit is the error reported for a URL still queued when Config.MaxPages pages had been
// fetched: it was not fetched.
var ErrPageLimit = errors.New("crawler: not fetched: the crawl reached its page limit (Config.MaxPages)")

// ErrNoClient is returned by Run when Config.Client is nil.
var ErrNoClient = errors.New("crawler: Config.Client is nil; pass the door's client (politeness.Door.Client)")

// Config configures [Run]. Client is required; every other zero field means the documented
// default.
type Config struct {
	// Client sends every request. Pass the door's (politeness.Door.Client): the crawler itself
	// enforces no politeness, it only avoids asking for a slot the door would make it wait for.
	Client *http.Client
	// Start lists the start URLs: depth 1, found via "start". A start URL the frontier refuses
	// is reported with the frontier's error.
	Start []string
	// Frontier holds the URLs; nil means an in-memory frontier with its defaults and no Pacer.
	// Give it the door's clock as its Pacer, so that no worker waits on an origin's turn.
	Frontier *frontier.Frontier
	// Workers is the number of requests in progress at once across all origins — page fetches
	// and discovery requests together; 0 means DefaultWorkers.
	Workers int
	// MaxPages stops the crawl after this many pages got a response (of any status); 0 means no
	// limit. Requests that got none (refused by robots.txt, a network error) do not count.
	MaxPages int
	// MaxDepth fetches pages of depth at most MaxDepth (start URLs are 1, links on a depth-d page
	// are d+1); 0 means no limit.
	MaxDepth int
	// Scope says which links to follow; nil means [SameOrigins] of Start.
	Scope func(*url.URL) bool
	// Discovery, when not nil, reads what each origin of Start publishes for machines before its
	// HTML crawl (see discovery/plan), with these options. It needs the door's client: the
	// planner reads robots.txt Sitemap lines from the door (plan.SitemapLister).
	Discovery *plan.Options
	// DiscoveryClaims, with Discovery and a Frontier over a shared storage (processes on one
	// Redis: redisstore.Store.Discovery), reads each origin's discovery documents in one of the
	// crawls only; the others take what it queues from the shared queue (see plan.Claims). nil:
	// this run discovers every origin of Start itself.
	DiscoveryClaims plan.Claims
	// LastmodTrust is how long a listing's date (a sitemap's <lastmod>, a feed's or an API's
	// modified time) is believed: a page it dates before the door's stored copy was produced is
	// answered from the cache without asking the site, while that copy is younger than
	// LastmodTrust (cache.WithLastModified); otherwise the usual conditional request goes out.
	// 0 means DefaultLastmodTrust; a negative value turns it off.
	LastmodTrust time.Duration
	// Links bounds the extraction of each page (see links.Options); the zero value is its default.
	Links links.Options
	// Report receives the outcome of every URL, one call at a time; nil discards them.
	Report func(Result)
	// Grace is how long requests already in progress may finish after the context ends; 0
	// cancels them at once. A CLI that stops on SIGINT calls the door's Stop (which cancels
	// requests still waiting for their turn) and gives the rest a few seconds.
	Grace time.Duration
	// Logger receives pages with more links than the limit, extractions cut short and links the
	// frontier refused; nil means warnings and errors only, on slog.Default().
	Logger *slog.Logger
}

// Result is what became of one URL.
type Result struct {
	URL      string    // as the frontier queued it (normalised)
	FinalURL string    // after redirects; "" without a response
	Status   int       // the response's status; 0 without one
	Kind     kind.Kind // what the request was for: kind.HTML for a page, another kind for a discovery document
	FoundVia string    // how the URL was found: a frontier.Via value (start, sitemap, llms, feed, link, …)
	Depth    int       // 1 for start URLs
	Bytes    int64     // body bytes read (after content decoding)
	// Err is nil for a page read to its end. Otherwise: the client's error (the door's refusals
	// among them: *robots.DisallowedError, *hostclock.GiveUpError, politeness.ErrStopped), the
	// body's read error (a *politeness.BodyTooLargeError), the frontier's refusal of a URL of a
	// given-up origin, or ErrInterrupted / ErrPageLimit for a URL never sent.
	Err error
}

// Summary counts what a run did.
type Summary struct {
	Pages      int // URLs that got a response (any status)
	Failed     int // URLs that got no response: refused by the door or the frontier, network errors
	NotFetched int // URLs still queued when the run stopped early; 0 over a shared frontier storage, whose queue stays for the crawl's other processes
	// Documents counts the discovery documents requested (sitemaps, llms.txt, feeds, API
	// responses); they are neither Pages nor Failed.
	Documents int
	// Sources counts the URLs reported, pages and documents, by how they were found (FoundVia).
	Sources map[string]int
	// Discovery is what discovery found, with Config.Discovery.
	Discovery plan.Summary
	// LinksOverLimit counts links beyond links.Options.MaxLinks on their page: not followed.
	LinksOverLimit int
	// Origins are the frontier's counters per origin: queued, done, duplicates, dropped (the
	// per-origin queue limit), refused after a give-up.
	Origins []frontier.OriginStats
}

// SameOrigins returns a scope that keeps to the origins (scheme, host and port) of urls.
// URLs that do not parse are ignored.
func SameOrigins(urls []string) func(*url.URL) bool {
	keys := map[string]bool{}
	for _, s := range urls {
		if u, err := url.Parse(s); err == nil {
			if k, err := origin.RobotsKey(u); err == nil {
				keys[k] = true
			}
		}
	}
	return func(u *url.URL) bool {
		k, err := origin.RobotsKey(u)
		return err == nil && keys[k]
	}
}

// Run crawls until nothing is left to fetch, ctx ends, MaxPages pages are fetched or the
// frontier fails, and reports every URL through cfg.Report. It returns ctx's error when ctx
// ended the run, the frontier's error when it failed (a shared store or clock out of reach), and
// an error for an unusable Config; the Summary is valid in every case.
func Run(ctx context.Context, cfg Config) (Summary, error) {
	if cfg.Client == nil {
		return Summary{}, ErrNoClient
	}
	if cfg.LastmodTrust == 0 {
		cfg.LastmodTrust = DefaultLastmodTrust
	}
	if cfg.Workers < 0 || cfg.MaxPages < 0 || cfg.MaxDepth < 0 {
		return Summary{}, fmt.Errorf("crawler: Config.Workers %d, MaxPages %d and MaxDepth %d must not be negative; use 0 for the defaults",
			cfg.Workers, cfg.MaxPages, cfg.MaxDepth)
	}
	workers := cmp.Or(cfg.Workers, DefaultWorkers)
	r := &run{cfg: cfg, f: cfg.Frontier, scope: cfg.Scope, log: quietlog.Or(cfg.Logger),
		pages: newPageBudget(cfg.MaxPages), sources: map[string]int{},
		inFlight: semaphore.NewWeighted(int64(workers))}
	if r.f == nil {
		var err error
		if r.f, err = frontier.New(frontier.Options{Logger: cfg.Logger}); err != nil {
			return Summary{}, err
		}
	}
	if r.scope == nil {
		r.scope = SameOrigins(cfg.Start)
	}
	if cfg.Discovery != nil {
		var err error
		r.planner, err = plan.New(plan.Config{Client: cfg.Client, Frontier: r.f, Options: *cfg.Discovery,
			PagesLeft: r.pages.left, MaxDocuments: cfg.MaxPages, InFlight: r.inFlight,
			Report: r.reportDocument, Logger: cfg.Logger, Claims: cfg.DiscoveryClaims})
		if err != nil {
			return Summary{}, fmt.Errorf("crawler: Config.Discovery: %w", err)
		}
	}
	// Requests outlive ctx by Grace, so that those on the wire may finish; nothing new starts.
	reqCtx, cancelRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRequests()
	var grace *time.Timer
	var graceMu sync.Mutex
	stopWatching := context.AfterFunc(ctx, func() {
		r.f.Close()
		graceMu.Lock()
		defer graceMu.Unlock()
		grace = time.AfterFunc(cfg.Grace, cancelRequests)
	})
	defer stopWatching()

	// Discovery lives as long as the workers: it ends when they stop, whatever stopped them.
	planCtx, stopPlanning := context.WithCancel(reqCtx)
	defer stopPlanning()
	r.queueStarts(planCtx)

	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { r.work(ctx, reqCtx) })
	}
	wg.Wait()
	stopPlanning()
	if r.planner != nil {
		r.planner.Wait()
	}
	graceMu.Lock()
	if grace != nil {
		grace.Stop()
	}
	graceMu.Unlock()

	cause := ErrInterrupted
	if ctx.Err() == nil && r.failure() == nil && r.pages.spent() {
		cause = ErrPageLimit
	}
	for e := range r.f.Drain() {
		r.notFetched.Add(1)
		r.report(Result{URL: e.URL, Kind: kind.HTML, FoundVia: e.Via, Depth: e.Depth, Err: cause})
	}
	s := Summary{Pages: int(r.fetched.Load()), Failed: int(r.failed.Load()), NotFetched: int(r.notFetched.Load()),
		Documents: int(r.documents.Load()), LinksOverLimit: int(r.overLimit.Load()), Origins: r.f.Stats()}
	r.reportMu.Lock()
	s.Sources = r.sources
	r.reportMu.Unlock()
	if r.planner != nil {
		s.Discovery = r.planner.Summary()
	}
	if err := ctx.Err(); err != nil {
		return s, err
	}
	return s, r.failure()
}

// run is the state of one Run.
type run struct {
	cfg     Config
	f       *frontier.Frontier
	scope   func(*url.URL) bool
	log     *slog.Logger
	pages   *pageBudget
	planner *plan.Planner // nil without Config.Discovery
	// inFlight bounds the requests in progress, pages and discovery documents: Config.Workers.
	inFlight *semaphore.Weighted

	reportMu sync.Mutex
	sources  map[string]int // results by FoundVia, guarded by reportMu

	fetched, failed, notFetched, overLimit, documents atomic.Int64

	failMu sync.Mutex
	fail   error // the frontier's error that stopped the run
}

// work is one worker: take an item, fetch it, report it, acknowledge it; until the frontier has
// nothing left, is closed, or the page budget is spent.
func (r *run) work(ctx, reqCtx context.Context) {
	for {
		if !r.pages.reserve(ctx) {
			r.f.Close() // the budget is spent: wake the workers waiting for an origin's turn
			return
		}
		it, err := r.f.Next(ctx)
		if err != nil {
			r.pages.settle(false)
			if !errors.Is(err, frontier.ErrExhausted) && !errors.Is(err, frontier.ErrClosed) && ctx.Err() == nil {
				r.stop(err)
			}
			return
		}
		var res Result
		var page *plan.Page
		if it.Refused != nil {
			res = Result{URL: it.URL, Kind: kind.HTML, FoundVia: it.Via, Depth: it.Depth, Err: it.Refused}
		} else if err := r.inFlight.Acquire(reqCtx, 1); err != nil {
			res = Result{URL: it.URL, Kind: kind.HTML, FoundVia: it.Via, Depth: it.Depth, Err: ErrInterrupted}
		} else {
			res, page = r.fetch(reqCtx, it)
			r.inFlight.Release(1)
		}
		if r.planner != nil {
			r.planner.StartRead(it, page)
		}
		r.pages.settle(res.Status != 0)
		if res.Status != 0 {
			r.fetched.Add(1)
		} else {
			r.failed.Add(1)
		}
		r.report(res)
		if err := r.f.Ack(it, res.Err); err != nil {
			r.stop(err)
			return
		}
	}
}

// stop ends the run because the frontier failed.
func (r *run) stop(err error) {
	r.failMu.Lock()
	if r.fail == nil {
		r.fail = err
		r.log.Error("crawler: the frontier failed; stopping the crawl", "err", err)
	}
	r.failMu.Unlock()
	r.f.Close()
}

func (r *run) failure() error {
	r.failMu.Lock()
	defer r.failMu.Unlock()
	return r.fail
}

// queueStarts queues the start URLs — through the planner with Discovery, which holds each
// origin back until its discovery documents are read — and reports those the frontier refused.
func (r *run) queueStarts(planCtx context.Context) {
	errs := make([]error, len(r.cfg.Start))
	if r.planner != nil {
		errs = r.planner.Begin(planCtx, r.cfg.Start)
	} else {
		for i, s := range r.cfg.Start {
			_, errs[i] = r.f.Push(frontier.Entry{URL: s, Depth: 1, Via: frontier.ViaStart})
		}
	}
	for i, err := range errs {
		if err != nil {
			r.report(Result{URL: r.cfg.Start[i], Kind: kind.HTML, FoundVia: frontier.ViaStart, Depth: 1, Err: err})
		}
	}
}

// reportDocument reports a discovery document the planner requested.
func (r *run) reportDocument(d plan.Document) {
	r.documents.Add(1)
	r.report(Result{URL: d.URL, FinalURL: d.FinalURL, Status: d.Status, Kind: d.Kind, FoundVia: d.FoundVia,
		Bytes: d.Bytes, Err: d.Err})
}

func (r *run) report(res Result) {
	r.reportMu.Lock()
	defer r.reportMu.Unlock()
	r.sources[res.FoundVia]++
	if r.cfg.Report != nil {
		r.cfg.Report(res)
	}
}
