package extensions

// This file decides how a Colly collector is seeded from what its start sites publish for
// machines: the planner reads each origin's sitemaps, llms.txt, feeds and APIs through the
// collector's door, and a few workers hand the URLs found to the collector.

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"sync"

	"github.com/gocolly/colly/v2"
	"golang.org/x/sync/semaphore"

	"github.com/politecrawl/etiquette/discovery/links"
	"github.com/politecrawl/etiquette/discovery/plan"
	"github.com/politecrawl/etiquette/frontier"
)

// DefaultDiscoverWorkers is the number of URLs Discover has in the collector's hands at once
// when DiscoverOptions.Workers is 0. The door keeps each origin to its own budget; more workers
// only help a crawl of many origins.
const DefaultDiscoverWorkers = 4

// ErrNotPolite is returned by Discover for a collector without a working door: call Polite
// first, and check its error.
var ErrNotPolite = errors.New("etiquette: Discover needs a collector that extensions.Polite installed the door on")

// DiscoverOptions configures [Discover]. The zero value discovers with discovery/plan's defaults
// and hands URLs over from DefaultDiscoverWorkers workers.
type DiscoverOptions struct {
	// Plan tunes discovery: no /sitemap.xml guess, /llms-full.txt, the low-water mark, ….
	Plan plan.Options
	// Workers is the number of URLs in the collector's hands at once, and the number of
	// discovery's own requests (sitemaps, llms.txt, feeds, APIs) in flight at once, whatever
	// the number of start origins; 0 means DefaultDiscoverWorkers. The two are bounded apart:
	// a page's callback that visits a link waits for its origin's discovery, which must not
	// wait for that page's unit in turn.
	Workers int
	// Frontier holds the URLs found; nil means an in-memory one that spaces each origin's URLs
	// at the default 3 per second. Give it your Policy.Clock as its Pacer (frontier.Options), or
	// the Rate of your Policy, so that it follows the door's pace.
	Frontier *frontier.Frontier
	// Context ends the discovery early; nil means it runs until nothing is left.
	Context context.Context
	// Report receives every discovery document requested (sitemaps, llms.txt, feeds, API
	// responses); nil discards them.
	Report func(plan.Document)
}

// Discover visits, with c, the start URLs and every URL their sites list for machines, in
// discovery order (see discovery/plan): per origin robots.txt's sitemaps, then llms.txt, then
// the start page, then the feeds and APIs the start page advertises, then the URLs found —
// each once; [FoundVia] tells a callback how. It returns when nothing is left, with what discovery found; the error joins the start URLs that
// could not be queued.
//
// It replaces c.Visit(start) for the start URLs; the collector's callbacks follow links as
// before. Their requests for an origin still being discovered wait until its discovery
// documents are read, so the site sees its pages requested after them (a clone's requests do
// not wait: Colly's Clone copies no callbacks). Discovery's own requests go through the door
// Polite installed, as c's and its clones' do.
//
// URLs are handed to c from a fixed number of workers, never one goroutine per URL: with a
// synchronous collector each worker's c.Request returns when the page is done; with c.Async a
// worker waits for the page's OnScraped or OnError (or, for a page that reports neither — a
// Request.Abort in a callback registered after Discover — until the collector is idle).
func Discover(c *colly.Collector, opts DiscoverOptions, starts ...string) (plan.Summary, error) {
	if userTriggered(c) {
		return plan.Summary{}, fmt.Errorf("%w: Discover reads sitemaps, llms.txt and feeds, which a fetch for one person never does", ErrUserTriggeredFollow)
	}
	door := doorOf(c)
	if door == nil {
		return plan.Summary{}, ErrNotPolite
	}
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := opts.Frontier
	if f == nil {
		var err error
		if f, err = frontier.New(frontier.Options{}); err != nil {
			return plan.Summary{}, err
		}
	}
	workers := cmp.Or(opts.Workers, DefaultDiscoverWorkers)
	inFlight := semaphore.NewWeighted(int64(workers))
	p, err := plan.New(plan.Config{Client: door.Client(), Frontier: f, Options: opts.Plan, Report: opts.Report, InFlight: inFlight})
	if err != nil {
		return plan.Summary{}, err
	}
	d := &discovery{c: c, f: f, p: p, ctx: ctx,
		waits: &asyncWaits{waiting: map[*visit]struct{}{}, workers: workers, kick: make(chan struct{}, 1)}}
	d.install()
	errs := p.Begin(ctx, starts)

	var watcher sync.WaitGroup
	if c.Async {
		watcher.Go(func() { d.waits.watch(ctx, c) })
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(d.work)
	}
	wg.Wait()
	cancel()
	p.Wait()
	if c.Async {
		c.Wait()
	}
	watcher.Wait()
	var startErrs []error
	for i, err := range errs {
		if err != nil {
			startErrs = append(startErrs, fmt.Errorf("start URL %s: %w", starts[i], err))
		}
	}
	return p.Summary(), errors.Join(startErrs...)
}

// doorOf returns the door Polite installed on c, or nil.
func doorOf(c *colly.Collector) interface{ Client() *http.Client } {
	g, ok := c.Context.(*guard)
	if !ok {
		return nil
	}
	if st := g.state.Load(); st != nil && st.door != nil {
		return st.door
	}
	return nil
}

// FoundVia returns how Discover found the URL of r — a frontier.Via value: start, sitemap,
// llms, feed, … — or "" for a request Discover did not make (a link a callback followed; Colly
// gives it the colly.Context of the page it was found on, so the request itself is compared).
func FoundVia(r *colly.Request) string {
	if v := visitOf(r); v != nil {
		return v.item.Via
	}
	return ""
}

// discoverKey is the colly.Context key under which Discover keeps its visit.
const discoverKey = "etiquette.discover"

// discovery is one Discover call.
type discovery struct {
	c   *colly.Collector
	f   *frontier.Frontier
	p   *plan.Planner
	ctx context.Context

	waits *asyncWaits // with c.Async
}

// visit is one URL Discover handed to the collector.
type visit struct {
	item frontier.Item
	p    *plan.Planner

	mu        sync.Mutex
	id        uint32 // the colly request ID, once its OnRequest ran
	done      chan struct{}
	doneOnce  sync.Once
	startOnce sync.Once
}

func (v *visit) finish() { v.doneOnce.Do(func() { close(v.done) }) }

// started passes the start page to the planner, once; page nil when it said nothing.
func (v *visit) started(page *plan.Page) {
	v.startOnce.Do(func() { v.p.StartRead(v.item, page) })
}

// visitOf returns the visit whose request r is. A request a callback made from it shares its
// colly.Context, so the request ID tells them apart.
func visitOf(r *colly.Request) *visit {
	if r == nil || r.Ctx == nil {
		return nil
	}
	v, ok := r.Ctx.GetAny(discoverKey).(*visit)
	if !ok {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.id == 0 {
		v.id = r.ID // the first request with this context is the visit's own
	}
	if v.id != r.ID {
		return nil
	}
	return v
}

// install registers the callbacks Discover needs on c.
func (d *discovery) install() {
	d.c.OnRequest(func(r *colly.Request) {
		v := visitOf(r)
		if v == nil {
			// A page a callback asked for: not before its origin's discovery documents.
			select {
			case <-d.p.Released(r.URL):
			case <-d.ctx.Done():
			}
			return
		}
		if r.IsAbort() {
			v.finish()
		}
	})
	d.c.OnResponse(func(r *colly.Response) {
		if v := visitOf(r.Request); v != nil && v.item.Via == frontier.ViaStart {
			v.started(startPage(r))
		}
	})
	d.c.OnError(func(r *colly.Response, _ error) {
		if v := visitOf(r.Request); v != nil {
			v.started(nil)
			v.finish()
		}
	})
	d.c.OnScraped(func(r *colly.Response) {
		if v := visitOf(r.Request); v != nil {
			v.finish()
		}
	})
}

// startPage reads what a start page advertises from Colly's response.
func startPage(r *colly.Response) *plan.Page {
	var h http.Header
	if r.Headers != nil {
		h = *r.Headers
	}
	page := &plan.Page{URL: r.Request.URL, Header: h}
	if mt, _, _ := mime.ParseMediaType(h.Get("Content-Type")); mt == "text/html" || mt == "application/xhtml+xml" {
		s, _ := links.Extract(bytes.NewReader(r.Body), r.Request.URL, links.Options{}, nil)
		page.Head = s.Head
	}
	return page
}

// work hands URLs to the collector until the frontier has none left.
func (d *discovery) work() {
	for {
		it, err := d.next()
		if err != nil {
			return
		}
		v := &visit{item: it, p: d.p, done: make(chan struct{})}
		if it.Refused == nil {
			err = d.request(v)
		}
		v.started(nil) // a start page that never reached OnResponse said nothing
		if errors.Is(err, colly.ErrMaxRequests) {
			d.f.Close()
		}
		_ = d.f.Ack(it, it.Refused)
	}
}

// next waits for the frontier's next URL; with c.Async the worker is parked meanwhile.
func (d *discovery) next() (frontier.Item, error) {
	if d.c.Async {
		d.waits.park()
		defer d.waits.unpark()
	}
	return d.f.Next(d.ctx)
}

// request hands v's URL to the collector and returns when its page has ended.
func (d *discovery) request(v *visit) error {
	cctx := colly.NewContext()
	cctx.Put(discoverKey, v)
	if !d.c.Async {
		return d.c.Request(http.MethodGet, v.item.URL, nil, cctx, nil)
	}
	d.waits.send.RLock()
	err := d.c.Request(http.MethodGet, v.item.URL, nil, cctx, nil)
	d.waits.send.RUnlock()
	if err == nil {
		d.waits.wait(d.ctx, v)
	}
	return err
}

// asyncWaits holds the workers of an Async collector until their pages end, and releases them
// anyway once the collector is idle: a page aborted by a callback registered after Discover, or
// whose charset Colly cannot convert, reports neither OnScraped nor OnError, and its worker must
// not wait for ever.
//
// The collector is idle when c.Wait returns. sync.WaitGroup forbids an Add from zero while Wait
// runs, so the watcher waits only while every worker is parked (waiting for a page or for the
// frontier) and holds send, which a worker holds to hand a URL over.
type asyncWaits struct {
	send sync.RWMutex

	mu      sync.Mutex
	waiting map[*visit]struct{}
	workers int
	parked  int
	kick    chan struct{} // one pending request to look for an idle collector
}

// park marks the worker as not handing anything to the collector; when every worker is, the
// watcher may look.
func (a *asyncWaits) park() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.parked++
	if a.parked == a.workers {
		select {
		case a.kick <- struct{}{}:
		default:
		}
	}
}

func (a *asyncWaits) unpark() {
	a.mu.Lock()
	a.parked--
	a.mu.Unlock()
}

// wait holds the worker until v's page ends, the collector was idle after v was sent, or ctx
// ends.
func (a *asyncWaits) wait(ctx context.Context, v *visit) {
	a.mu.Lock()
	a.waiting[v] = struct{}{}
	a.mu.Unlock()
	a.park()
	select {
	case <-v.done:
	case <-ctx.Done():
	}
	a.unpark()
	a.mu.Lock()
	delete(a.waiting, v)
	a.mu.Unlock()
}

// watch waits, each time every worker is parked, for the collector to be idle, and then ends
// every wait begun before: c.Wait returns only when every request sent before it has ended, so
// those pages are over whether they said so or not.
func (a *asyncWaits) watch(ctx context.Context, c *colly.Collector) {
	for {
		select {
		case <-a.kick:
		case <-ctx.Done():
			return
		}
		a.send.Lock()
		a.mu.Lock()
		waiting := make([]*visit, 0, len(a.waiting))
		for v := range a.waiting {
			waiting = append(waiting, v)
		}
		a.mu.Unlock()
		c.Wait()
		a.send.Unlock()
		for _, v := range waiting {
			v.finish()
		}
	}
}
