package extensions

import (
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/etiquette/politeness"
)

// ErrUserTriggeredFollow is the error of every request a [UserTriggered] collector would send
// after its first page — a link a callback followed, a clone's Visit, a Discover — and of
// Discover on such a collector. The request is not sent.
var ErrUserTriggeredFollow = errors.New("etiquette: a user-triggered collector fetches the one page a person asked for and follows nothing from it " +
	"(build a new collector with extensions.UserTriggered for each page the person asks for, or use extensions.Polite for a crawl)")

// ModeKey is the colly.Context key under which a [UserTriggered] collector marks every request
// and response: r.Ctx.Get(ModeKey) == ModeUserTriggered.
const (
	ModeKey           = "etiquette.mode"
	ModeUserTriggered = "user-triggered"
)

// UserTriggered is [Polite] for a collector that fetches one page because one person asked for it,
// now: p's Mode is forced to politeness.UserTriggered, so the requests carry the user-triggered
// token (e.g. ExampleBot-User), robots.txt is read for that token (see Policy.StrictRobots), the
// wait for the origin's turn is bounded (Policy.MaxWait) and nothing is kept past the session (a
// private in-memory cache, no cookies without a declared purpose, no file, no shared store).
//
// The collector lets its first Visit through — with its redirect hops, its robots.txt and the
// door's retries — and refuses every later request with ErrUserTriggeredFollow: a link a
// callback follows, a clone's Visit, a second Visit. It never reads sitemaps, llms.txt or feeds
// ([Discover] refuses it). Every request and response carries r.Ctx.Get(ModeKey) ==
// ModeUserTriggered, set by a callback UserTriggered registers on c (a clone made before the
// call, or a clone's own first Visit, lacks it; the one-page rule does not rest on it).
//
// What such a collector fetches is for that person now: not for training, not for an index, not
// for a later crawl. The errors are Polite's, and a Policy.CacheStore that would keep the page
// (anything but a *cache.MemoryStore) is refused.
func UserTriggered(c *colly.Collector, p politeness.Policy) error {
	p.Mode = politeness.UserTriggered
	if _, err := install(c, p, func(next http.RoundTripper) http.RoundTripper { return &onePage{next: next} }); err != nil {
		return err
	}
	c.OnRequest(func(r *colly.Request) { r.Ctx.Put(ModeKey, ModeUserTriggered) })
	return nil
}

// userTriggered reports whether UserTriggered installed c's transport.
func userTriggered(c *colly.Collector) bool {
	g, ok := c.Context.(*guard)
	if !ok {
		return false
	}
	if st := g.state.Load(); st != nil {
		_, one := st.transport.(*onePage)
		return one
	}
	return false
}

// onePage lets one page through — the first request that is not a redirect hop, with its hops —
// and refuses every other. Go's http.Client marks a hop with the response that caused it
// (Request.Response); a request a collector builds never carries one. Two requests of Colly's
// own pass too, because they are part of fetching that one page: one GET of /robots.txt before
// the page's GET (Colly's robots.txt check, should a caller turn it back on; the door decides
// robots.txt anyway), after which the page must be on that robots.txt's origin (and, after the
// page's HEAD, on the page's origin); and, when the first request is a HEAD (Colly's CheckHead),
// one GET of the same URL.
type onePage struct {
	next http.RoundTripper

	mu          sync.Mutex
	robots      string // the origin of the robots.txt let through before the page; "" before it
	first       string // the URL of the first request; "" before it
	firstOrigin string // its origin
	head        bool   // the first request was a HEAD, and its GET has not come yet
}

func (o *onePage) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Response != nil || o.admit(req) {
		return o.next.RoundTrip(req)
	}
	return refusingTransport{fmt.Errorf("%w: not requesting %s", ErrUserTriggeredFollow, req.URL.Redacted())}.RoundTrip(req)
}

// admit reports whether req, which is not a redirect hop, belongs to the one page.
func (o *onePage) admit(req *http.Request) bool {
	origin := req.URL.Scheme + "://" + req.URL.Host
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.robots == "" && (o.first == "" || (o.head && o.firstOrigin == origin)) && req.Method == http.MethodGet &&
		req.URL.Path == "/robots.txt" && req.URL.RawQuery == "":
		o.robots = origin
		return true
	case o.first == "" && (o.robots == "" || o.robots == origin):
		o.first, o.firstOrigin, o.head = req.URL.String(), origin, req.Method == http.MethodHead
		return true
	case o.head && req.Method == http.MethodGet && req.URL.String() == o.first:
		o.head = false
		return true
	}
	return false
}
