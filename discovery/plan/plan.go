// Package plan reads, per origin, what a site publishes for machines before any of its pages is
// crawled, and puts the URLs it lists into the crawl's frontier as they stream in.
//
// # Discovery order
//
// Each origin of the start URLs is discovered on its own (origins in parallel, one goroutine
// each); an origin's steps come one after the other, every request through the door (the
// client's transport), marked with its kind so that Accept, body caps and caching follow it:
//
//  1. robots.txt: its Sitemap lines (http(s) only, without duplicates), read from the copy the
//     door's robots gate obeys ([SitemapLister], politeness.Door.Sitemaps). A sitemap on another
//     origin is fetched under that origin's robots.txt, and its entries are kept only for the
//     origin whose robots.txt named it. Without any Sitemap line, /sitemap.xml is tried once
//     (unless Options.NoSitemapGuess).
//  2. Sitemaps, through discovery/sitemap: indexes at most three files deep, each file once.
//     Files are read until the origin has more than Options.LowWater URLs queued; the rest are
//     read one by one when the origin's queue runs down to that mark again, so a crawl of 10
//     pages from a site of 50,000-URL sitemaps reads one file.
//  3. /llms.txt, through discovery/llms: a 404 is normal, a soft 404 (HTML) is not an llms.txt.
//     Its "## Optional" links are queued last, and not at all when the crawl's page budget is
//     already spoken for by the URLs queued for the origin. /llms-full.txt only when llms.txt
//     links it, or with Options.LLMsFull.
//  4. The start page — the one page fetched before the rest, by the crawl itself — because
//     that is where feeds and APIs are advertised: its Link header (RFC 8288) and the typed
//     <link> elements of its head (discovery/links).
//  5. What the start page advertises: rel=alternate feeds (discovery/feeds); the WordPress REST
//     API (rel="https://api.w.org/", discovery/wprest; when it is not offered the HTML crawl
//     covers the site, nothing is worked around); an API catalog (rel=api-catalog, RFC 9727: its
//     APIs recorded, its HTML documentation pages queued); rel=sitemap files; and JSON or
//     Markdown alternates that carry the start page's content, queued as pages.
//  6. Then the origin is released: its pages go out, and the HTML crawl follows their links for
//     whatever none of the above listed. The frontier's de-duplication makes every URL one
//     request, whichever source listed it first.
//
// Nothing under /.well-known/ is requested but an API catalog a resource of the site
// references; no name is ever tried there. Discovery documents are not pages: a crawl's page
// limit does not count them.
//
// Crawls that share one frontier storage (processes on one Redis) read each origin's documents
// once with Config.Claims: the crawl that claims the origin runs the steps above and queues what
// they list into the shared queue; the others hold the origin's pages back until it releases
// them (step 6), take its URLs from the shared queue, and take the discovery over if it dies
// ([Claims]).
//
// Every URL queued carries how it was found (frontier.Entry.Via, "found_via") and, where the
// source gives one, when it last changed (frontier.Entry.LastMod). Most callers do not use this
// package directly: crawler.Run runs it with crawler.Config.Discovery, and
// extensions.Discover seeds a Colly collector with it.
package plan

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/politecrawl/etiquette/discovery/discovered"
	"github.com/politecrawl/etiquette/discovery/links"
	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/internal/quietlog"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// Defaults of [Options].
const (
	// DefaultLowWater is the number of URLs an origin has queued below which the next sitemap
	// file is read: at 3 requests a second, half a minute of work.
	DefaultLowWater = 100
	// DefaultMaxFeeds is the number of feeds read per start page; a site advertises one or two
	// (posts, comments), rarely more that list other pages.
	DefaultMaxFeeds = 4
)

// ErrNoSitemapLister is returned by [New] when Config.Sitemaps is nil and the client's
// transport cannot list robots.txt Sitemap lines either: pass the door's client.
var ErrNoSitemapLister = errors.New("plan: Config.Sitemaps is nil and the client's transport is not a SitemapLister; pass the door's client (politeness.Door.Client)")

// SitemapLister reads the Sitemap lines of the robots.txt of u's origin. politeness.Door
// implements it with the robots.txt copy its robots gate obeys.
type SitemapLister interface {
	Sitemaps(ctx context.Context, u *url.URL) ([]string, error)
}

// Options tunes discovery. The zero value is the default: guess /sitemap.xml when robots.txt
// names none, read /llms-full.txt only when llms.txt links it.
type Options struct {
	// NoSitemapGuess turns off the one request for /sitemap.xml on an origin whose robots.txt
	// names no sitemap.
	NoSitemapGuess bool
	// LLMsFull reads /llms-full.txt even when llms.txt does not link it.
	LLMsFull bool
	// LowWater is the number of queued URLs of an origin below which its next sitemap file is
	// read; 0 means DefaultLowWater.
	LowWater int
	// MaxFeeds caps the feeds read per start page; 0 means DefaultMaxFeeds.
	MaxFeeds int
	// WordPressPages caps the requests per WordPress REST listing (wprest.Options.MaxPages); 0
	// means its default.
	WordPressPages int
	// ForeignSitemapOrigins is the number of other origins whose sitemaps an origin's robots.txt
	// Sitemap lines may have the crawl read (see discovered.Reach); 0 means
	// discovered.DefaultForeignSitemapOrigins, a negative number none.
	ForeignSitemapOrigins int
}

// Config is what a [Planner] works with. Client and Frontier are required.
type Config struct {
	// Client sends every request: the door's (politeness.Door.Client).
	Client *http.Client
	// Sitemaps lists robots.txt Sitemap lines; nil means the client's transport, which must then
	// be a SitemapLister (the door is one).
	Sitemaps SitemapLister
	// Frontier receives the URLs found; the planner opens a frontier.Source per origin on it.
	Frontier *frontier.Frontier
	// Options tunes discovery.
	Options Options
	// PagesLeft says how many pages the crawl may still fetch, or a negative number for no
	// limit; nil means no limit. It decides whether llms.txt's Optional links are queued.
	PagesLeft func() int
	// Report receives every discovery document requested, one call at a time; nil discards them.
	Report func(Document)
	// Logger receives, at Debug, what went wrong with each document (also in its Document.Err),
	// and at Info a WordPress REST API that offers no listing; nil means warnings and errors only, on slog.Default().
	Logger *slog.Logger
	// InFlight, when not nil, bounds the crawl's requests in flight: every discovery request
	// holds one of its units from the moment it is sent until its body is closed (robots.txt's
	// Sitemap lines, read through the door, included). Give it the semaphore the crawl's page
	// fetches take theirs from, so that one number bounds both (crawler.Config.Workers).
	InFlight *semaphore.Weighted
	// MaxDocuments, when above 0, is the most discovery documents the crawl requests in all
	// (sitemap files, llms.txt files, feeds, API pages and catalogs; robots.txt, which the door
	// reads for every origin anyway, is not one): a crawl of N pages reads at most N. A request
	// past it is not sent (ErrMaxDocuments) and counted in Summary.Limits.
	MaxDocuments int
	// Claims, when not nil, shares each origin's discovery with the other crawls of the
	// frontier's shared storage (see [Claims]): the crawl that claims an origin reads its
	// documents, the others hold its pages back until that crawl releases them and take what it
	// queued from the shared queue. nil: this crawl discovers every origin of its start URLs.
	Claims Claims
}

// Document is a discovery document the planner requested: robots.txt's sitemaps, llms.txt, a
// feed, an API response.
type Document struct {
	URL      string    // as requested
	FinalURL string    // after redirects; "" without a response
	Status   int       // 0 without a response
	Kind     kind.Kind // kind.Sitemap, kind.LLMs, kind.Feed or kind.API
	FoundVia string    // how the document was found: a frontier.Via value
	Bytes    int64     // body bytes read (after content decoding)
	// Err is why the document yielded less than it could: the client's error (a robots.txt
	// refusal among them), the body's read error, or the reader's (sitemap.ErrNotSitemap,
	// llms.ErrNotLLMs, feeds.ErrBroken, …). A 404 is not an error: Status says it.
	Err error
}

// Page is what a start page said about the site, for [Planner.StartRead].
type Page struct {
	URL    *url.URL         // the page's URL after redirects
	Header http.Header      // the response's header (its Link fields)
	Head   []links.HeadLink // the typed <link> elements of its head (links.Summary.Head)
}

// Summary counts what discovery found.
type Summary struct {
	// Found counts the URLs queued, by Via.
	Found map[string]int
	// Duplicates counts the URLs a source listed that were queued before, by the listing's Via.
	Duplicates map[string]int
	// Documents counts the discovery documents requested.
	Documents int
	// SitemapsLeft counts the sitemap files known but not read when the crawl ended.
	SitemapsLeft int
	// OptionalSkipped counts llms.txt Optional links not queued because the page budget was spent.
	OptionalSkipped int
	// APIs lists the APIs that API catalogs named.
	APIs []string
	// Limits counts, per origin and reason, what a bound held back: URLs outside the crawl's
	// reach, private addresses, documents past MaxDocuments, listings stopped, sitemap files
	// refused by the walk, documents cut at an entry or size cap (whose entries before the cut
	// were queued all the same). Sorted by origin, then reason.
	Limits []Limit
}

// Planner runs discovery for the origins of a crawl's start URLs. Create it with [New], call
// [Planner.Begin] once with the start URLs before the crawl's workers start, pass each start
// page to [Planner.StartRead] as it is read, and after the crawl cancel Begin's context and call
// [Planner.Wait]. It holds one goroutine per origin of the start URLs, never one per URL.
type Planner struct {
	client   *http.Client
	sitemaps SitemapLister
	f        *frontier.Frontier
	opt      Options
	left     func() int
	log      *slog.Logger

	reportMu sync.Mutex
	report   func(Document)
	claims   Claims // nil: every origin discovered here
	reach    *discovered.Reach
	inFlight *semaphore.Weighted
	docs     documents

	mu      sync.Mutex
	origins map[string]*originPlan // by origin (origin.RobotsKey)
	sum     Summary
	limits  map[limitKey]*Limit
	wg      sync.WaitGroup
}

// New returns a planner over cfg.
func New(cfg Config) (*Planner, error) {
	if cfg.Client == nil || cfg.Frontier == nil {
		return nil, errors.New("plan: Config.Client and Config.Frontier are required")
	}
	if cfg.MaxDocuments < 0 {
		return nil, fmt.Errorf("plan: Config.MaxDocuments %d must not be negative; use 0 for no limit", cfg.MaxDocuments)
	}
	if cfg.Options.LowWater < 0 || cfg.Options.MaxFeeds < 0 || cfg.Options.WordPressPages < 0 {
		return nil, fmt.Errorf("plan: Options.LowWater %d, MaxFeeds %d and WordPressPages %d must not be negative; use 0 for the defaults",
			cfg.Options.LowWater, cfg.Options.MaxFeeds, cfg.Options.WordPressPages)
	}
	lister := cfg.Sitemaps
	if lister == nil {
		l, ok := cfg.Client.Transport.(SitemapLister)
		if !ok {
			return nil, ErrNoSitemapLister
		}
		lister = l
	}
	p := &Planner{sitemaps: lister, f: cfg.Frontier, opt: cfg.Options, left: cfg.PagesLeft,
		log: quietlog.Or(cfg.Logger), report: cfg.Report, claims: cfg.Claims, origins: map[string]*originPlan{},
		sum: Summary{Found: map[string]int{}, Duplicates: map[string]int{}}, limits: map[limitKey]*Limit{},
		inFlight: cfg.InFlight, docs: documents{max: int64(cfg.MaxDocuments)}}
	p.opt.LowWater = cmp.Or(p.opt.LowWater, DefaultLowWater)
	p.opt.MaxFeeds = cmp.Or(p.opt.MaxFeeds, DefaultMaxFeeds)
	p.client = observed(cfg.Client, p)
	return p, nil
}

// Begin holds the origin of each start URL in the frontier, queues the start URL there (depth
// 1, found via start) and starts the origin's discovery, which runs until ctx ends or nothing is
// left to read. It returns, aligned with starts, the error of each start URL the frontier
// refused (nil for the others); discovery still runs for the rest. With Config.Claims the start
// URLs are queued later — once this crawl claimed the origin's discovery, or the crawl that
// claimed it released the origin's pages — so Begin returns only the errors of URLs it could
// not parse, and a later refusal is logged. Call it once, before the crawl's workers start
// taking URLs.
func (p *Planner) Begin(ctx context.Context, starts []string) []error {
	errs := make([]error, len(starts))
	p.reach = discovered.NewReach(starts, p.opt.ForeignSitemapOrigins)
	var order []*originPlan
	for i, s := range starts {
		u, err := url.Parse(s)
		if err != nil {
			errs[i] = fmt.Errorf("%w: %v", frontier.ErrBadURL, err)
			continue
		}
		key, err := origin.RobotsKey(u)
		if err != nil {
			errs[i] = fmt.Errorf("%w: %q", frontier.ErrBadURL, s)
			continue
		}
		p.mu.Lock()
		op := p.origins[key]
		p.mu.Unlock()
		if op == nil {
			src, err := p.f.OpenSource(s)
			if err != nil {
				errs[i] = err
				continue
			}
			op = &originPlan{p: p, origin: key, start: u, src: src, released: make(chan struct{}),
				startLastMod: map[string]time.Time{}}
			p.mu.Lock()
			p.origins[key] = op
			p.mu.Unlock()
			order = append(order, op)
		}
		if p.claims != nil {
			// Queued once the origin's discovery is claimed, or released by the crawl that
			// claimed it (see follow); only a URL the frontier cannot keep is refused here.
			if _, err := frontier.Normalize(s); err != nil {
				errs[i] = err
				continue
			}
			op.startURLs = append(op.startURLs, s)
			continue
		}
		errs[i] = op.queueStart(s, true)
	}
	for _, op := range order {
		op.started = make(chan *Page, max(op.starts, len(op.startURLs)))
		p.wg.Go(func() { op.run(ctx) })
	}
	return errs
}

// StartRead gives the planner what a start page said: call it for every item found via
// frontier.ViaStart once it is finished, with page nil when it got no response or was not HTML
// (the planner then goes on without what the page would have advertised). Items of other Vias,
// and start pages of origins the planner does not discover, are ignored.
func (p *Planner) StartRead(it frontier.Item, page *Page) {
	if it.Via != frontier.ViaStart {
		return
	}
	u, err := url.Parse(it.URL)
	if err != nil {
		return
	}
	key, err := origin.RobotsKey(u)
	if err != nil {
		return
	}
	p.mu.Lock()
	op := p.origins[key]
	p.mu.Unlock()
	if op == nil || op.started == nil {
		return
	}
	select {
	case op.started <- page:
	default: // more start pages than were queued: a repeat, already accounted for
	}
}

// Released returns a channel that is closed once the origin of u lets its pages go: its
// discovery documents and what its start page advertised have been read, or its discovery
// ended. For an origin the planner does not discover, the channel is closed already. A driver
// whose link following does not pass through the frontier (a Colly collector's callbacks)
// waits on it before requesting one of the origin's pages.
func (p *Planner) Released(u *url.URL) <-chan struct{} {
	if key, err := origin.RobotsKey(u); err == nil {
		p.mu.Lock()
		op := p.origins[key]
		p.mu.Unlock()
		if op != nil {
			return op.released
		}
	}
	return closedChan
}

var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// LastMod returns when a listing of the site (a sitemap, a feed, an API) said the start page
// at url (as the frontier handed it out) last changed, or the zero time. A start URL is queued
// before any listing is read, so its frontier entry carries no date of its own.
func (p *Planner) LastMod(url string) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, op := range p.origins {
		if t, ok := op.startLastMod[url]; ok {
			return t
		}
	}
	return time.Time{}
}

// Wait waits for every origin's discovery to end: cancel Begin's context first (or let
// discovery run out of documents).
func (p *Planner) Wait() { p.wg.Wait() }

// Summary returns what discovery found so far.
func (p *Planner) Summary() Summary {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.sum
	s.Found, s.Duplicates = cloneCounts(s.Found), cloneCounts(s.Duplicates)
	s.APIs = slices.Clone(s.APIs)
	s.SitemapsLeft = 0
	for _, op := range p.origins {
		s.SitemapsLeft += op.sitemapsLeft()
	}
	s.Limits = p.limitsLocked()
	return s
}

func cloneCounts(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// reportDocument counts a document and hands it to Config.Report.
func (p *Planner) reportDocument(d Document) {
	p.mu.Lock()
	p.sum.Documents++
	p.mu.Unlock()
	if p.report == nil {
		return
	}
	p.reportMu.Lock()
	defer p.reportMu.Unlock()
	p.report(d)
}
