package plan_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/politecrawl/etiquette/discovery/discovered"
	"github.com/politecrawl/etiquette/discovery/plan"
	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// internet is a harness in which host names are served from loopback listeners while the
// connections report the addresses the names would have on the internet: public.example is a
// public site, *.sitemaps.example are public sitemap hosts, and every other address is dialled
// at the "private" listener, whose connections report the address dialled (169.254.169.254,
// 10.0.0.5, …).
type internet struct {
	site, sitemaps, private *httptest.Server
	privateHits             atomic.Int32
	sitemapHosts            sync.Map // Host header → true, for every request *.sitemaps.example received
	refused                 []events.Event
	mu                      sync.Mutex
}

type reportedConn struct {
	net.Conn
	remote net.Addr
}

func (c reportedConn) RemoteAddr() net.Addr { return c.remote }

func newInternet(t *testing.T, site, sitemaps http.Handler) *internet {
	in := &internet{site: httptest.NewServer(site), sitemaps: httptest.NewServer(sitemaps)}
	in.private = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in.privateHits.Add(1)
		io.WriteString(w, "User-agent: *\nAllow: /\n")
	}))
	t.Cleanup(func() { in.site.Close(); in.sitemaps.Close(); in.private.Close() })
	return in
}

func (in *internet) dial(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	var to *httptest.Server
	var reported netip.Addr
	switch {
	case host == "public.example":
		to, reported = in.site, netip.MustParseAddr("93.184.216.34")
	case host == "metadata.example": // a name that resolves to the metadata address
		to, reported = in.private, netip.MustParseAddr("169.254.169.254")
	case strings.HasSuffix(host, ".sitemaps.example"):
		to, reported = in.sitemaps, netip.MustParseAddr("93.184.216.35")
	default:
		a, err := netip.ParseAddr(host)
		if err != nil {
			return nil, fmt.Errorf("harness: no such host %q", host)
		}
		to, reported = in.private, a
	}
	c, err := (&net.Dialer{}).DialContext(ctx, network, to.Listener.Addr().String())
	if err != nil {
		return nil, err
	}
	var p int
	fmt.Sscan(port, &p)
	return reportedConn{Conn: c, remote: &net.TCPAddr{IP: reported.AsSlice(), Port: p}}, nil
}

// door is a door whose transport dials through the harness.
func (in *internet) door(t *testing.T) *politeness.Door {
	t.Helper()
	clock, err := hostclock.NewLocal(hostclock.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	bus := &events.Bus{}
	bus.Subscribe(func(e events.Event) {
		if e.Type == events.Refused {
			in.mu.Lock()
			in.refused = append(in.refused, e)
			in.mu.Unlock()
		}
	})
	d, err := politeness.NewDoor(politeness.Policy{
		Identity: identity.Identity{Profile: identity.Generic, Token: "ExampleBot", Version: "1.0", InfoURL: "https://example.org/bot"},
		Clock:    clock, Robots: robots.NewKeeper(robots.Options{}), NoCache: true, Logger: slog.New(slog.DiscardHandler),
		BaseTransport: &http.Transport{DialContext: in.dial}, Events: bus,
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func limitOf(s plan.Summary, origin, reason string) int {
	for _, l := range s.Limits {
		if l.Origin == origin && l.Reason == reason {
			return l.Count
		}
	}
	return 0
}

// A public site's robots.txt names a sitemap at an intranet address and one at a name that
// resolves to the cloud metadata address, and its start page advertises a feed at the metadata
// address: nothing of it may reach the private network, and each refusal says why — the
// address literal before anything is sent, the name at dial time (its robots.txt request is
// refused there, so the sitemap is never asked for).
func TestAPublicSitesDiscoveredURLsNeverReachAPrivateAddress(t *testing.T) {
	in := newInternet(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nAllow: /\nSitemap: http://metadata.example/latest/meta-data/sitemap.xml\nSitemap: http://10.0.0.5:6379/sitemap.xml\n")
		case "/":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<html><head><link rel="alternate" type="application/rss+xml" href="http://169.254.169.254/feed.xml"></head><body>home</body></html>`)
		default:
			http.NotFound(w, r)
		}
	}), http.NotFoundHandler())

	r := discover(t, in.door(t), "http://public.example/", plan.Options{}, nil)

	if n := in.privateHits.Load(); n != 0 {
		t.Errorf("the private listener received %d requests; want none", n)
	}
	if n := limitOf(r.summary, "http://public.example", plan.ReasonPrivateNetwork); n != 1 {
		t.Errorf("private-network limit %d, want the intranet sitemap; limits %+v", n, r.summary.Limits)
	}
	if n := limitOf(r.summary, "http://public.example", discovered.ReasonOffOrigin); n != 1 {
		t.Errorf("off-origin limit %d, want the feed; limits %+v", n, r.summary.Limits)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	private := map[string]bool{}
	for _, e := range in.refused {
		if e.Reason == "private-network" {
			private[e.URL] = true
		}
	}
	if !private["http://10.0.0.5:6379/sitemap.xml"] || !private["http://metadata.example/robots.txt"] {
		t.Errorf("Refused events (private-network) for %v; want the intranet sitemap and the metadata name's robots.txt", private)
	}
}

// sitemaps.org cross-submission lets robots.txt name sitemaps on other hosts; a robots.txt that
// names 1,000 of them has the crawl contact two, whose entries count only for the naming origin.
func TestARobotsTxtNamingAThousandSitemapHostsHasTwoRead(t *testing.T) {
	var lines strings.Builder
	lines.WriteString("User-agent: *\nAllow: /\n")
	for i := range 1000 {
		fmt.Fprintf(&lines, "Sitemap: http://s%d.sitemaps.example/sitemap.xml\n", i)
	}
	var in *internet
	in = newInternet(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, lines.String())
			return
		}
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><body>page</body></html>")
	}), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in.sitemapHosts.Store(r.Host, true)
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://public.example/from-%s</loc></url><url><loc>http://%s/theirs</loc></url></urlset>`, r.Host, r.Host)
	}))

	r := discover(t, in.door(t), "http://public.example/", plan.Options{}, nil)

	var hosts []string
	in.sitemapHosts.Range(func(k, _ any) bool { hosts = append(hosts, k.(string)); return true })
	if len(hosts) > discovered.DefaultForeignSitemapOrigins {
		t.Errorf("%d sitemap hosts contacted (%q); want at most %d", len(hosts), hosts, discovered.DefaultForeignSitemapOrigins)
	}
	if n := limitOf(r.summary, "http://public.example", discovered.ReasonForeignSitemaps); n != 998 {
		t.Errorf("foreign-sitemap-origins limit %d, want 998; limits %+v", n, r.summary.Limits)
	}
	for _, it := range r.items {
		if !strings.HasPrefix(it.URL, "http://public.example/") {
			t.Errorf("queued %s, not on the naming origin", it.URL)
		}
	}
	if r.via("http://public.example/from-s0.sitemaps.example") == "" {
		t.Errorf("the first foreign sitemap's entry for the naming origin was not queued: %+v", r.items)
	}
}

// A robots.txt with 10,000 Sitemap lines of empty files, for a crawl of 20 pages: discovery reads
// at most 20 documents (Config.MaxDocuments), and says so once, with a count.
func TestTenThousandSitemapLinesAreReadNoFurtherThanThePageBudget(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin()
	var lines strings.Builder
	lines.WriteString("User-agent: *\nAllow: /\n")
	for i := range 10_000 {
		fmt.Fprintf(&lines, "Sitemap: %s/sitemap-%d.xml\n", o.URL, i)
	}
	o.Robots(lines.String())
	o.Otherwise(etiquettetest.Sitemap())

	r := discoverWith(t, testDoor(t, o), o.URL+"/", plan.Config{MaxDocuments: 20, PagesLeft: func() int { return 20 }})

	sitemaps := 0
	for _, req := range site.Requests() {
		if strings.HasPrefix(req.Path(), "/sitemap-") {
			sitemaps++
		}
	}
	if sitemaps == 0 || sitemaps > 20 {
		t.Errorf("%d sitemap files read for a crawl of 20 pages; want 1 to 20", sitemaps)
	}
	if n := limitOf(r.summary, o.URL, plan.ReasonDocuments); n < 1 {
		t.Errorf("no max-documents limit counted; limits %+v", r.summary.Limits)
	}
	if len(r.summary.Limits) > 3 {
		t.Errorf("limits %+v; want one entry per origin and reason", r.summary.Limits)
	}
}

// An index of 50,000 sitemaps, each listing one page, for a crawl of 20 pages: the files read
// stop once the URLs queued cover the pages left.
func TestABigIndexIsReadNoFurtherThanThePagesLeft(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin()
	o.Robots("User-agent: *\nAllow: /\nSitemap: " + o.URL + "/index.xml\n")
	files := make([]string, 50_000)
	for i := range files {
		files[i] = fmt.Sprintf("%s/s/%d.xml", o.URL, i)
	}
	o.Serve("/index.xml", etiquettetest.SitemapIndex(files...))
	o.Otherwise(etiquettetest.Func(func(r *http.Request) etiquettetest.Answer {
		return etiquettetest.Sitemap(o.URL + "/page" + strings.TrimSuffix(r.URL.Path, ".xml"))
	}))

	r := discoverWith(t, testDoor(t, o), o.URL+"/", plan.Config{MaxDocuments: 20, PagesLeft: func() int { return 20 }})

	read := 0
	for _, req := range site.Requests() {
		if strings.HasPrefix(req.Path(), "/s/") {
			read++
		}
	}
	if read > 20 {
		t.Errorf("%d sitemap files of the index read for a crawl of 20 pages; want at most 20", read)
	}
	if r.summary.SitemapsLeft < 49_000 {
		t.Errorf("SitemapsLeft %d; want the files not read counted", r.summary.SitemapsLeft)
	}
}

// wpListing answers every page of a WordPress listing with the same 100 posts and claims a
// million pages.
func wpListing(o *etiquettetest.Origin) {
	var posts []map[string]string
	for i := range 100 {
		posts = append(posts, map[string]string{"link": fmt.Sprintf("%s/post-%d/", o.URL, i), "modified_gmt": "2024-03-01T10:00:00"})
	}
	body, _ := json.Marshal(posts)
	for _, route := range []string{"/wp-json/wp/v2/posts", "/wp-json/wp/v2/pages"} {
		o.Serve(route, etiquettetest.Text(string(body)).ContentType("application/json").Header("X-WP-TotalPages", "1000000"))
	}
	o.Serve("/", etiquettetest.HTMLPage("Blog").Header("Link", "</wp-json/>; rel=\"https://api.w.org/\""))
}

func apiRequests(site *etiquettetest.Site) int {
	n := 0
	for _, req := range site.Requests() {
		if strings.HasPrefix(req.Path(), "/wp-json/") {
			n++
		}
	}
	return n
}

// A WordPress REST API whose pages repeat stops after the first page that brings nothing new.
func TestAWordPressListingThatRepeatsStops(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin().Robots("User-agent: *\nAllow: /\n")
	wpListing(o)

	r := discover(t, testDoor(t, o), o.URL+"/", plan.Options{NoSitemapGuess: true}, nil)

	if n := apiRequests(site); n != 2 {
		t.Errorf("%d API requests; want 2: the first page, and the repeat that stops the listing", n)
	}
	if n := limitOf(r.summary, o.URL, plan.ReasonRepeating); n != 1 {
		t.Errorf("listing-repeats limit %d, want 1; limits %+v", n, r.summary.Limits)
	}
}

// With a page limit, X-WP-TotalPages claiming a million pages gets as many requests as the
// pages left can use: one, for 10 pages.
func TestAWordPressListingIsCappedByThePagesLeft(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin().Robots("User-agent: *\nAllow: /\n")
	wpListing(o)

	r := discoverWith(t, testDoor(t, o), o.URL+"/", plan.Config{Options: plan.Options{NoSitemapGuess: true},
		MaxDocuments: 10, PagesLeft: func() int { return 10 }})

	if n := apiRequests(site); n != 1 {
		t.Errorf("%d API requests for a crawl of 10 pages; want 1", n)
	}
	if n := limitOf(r.summary, o.URL, plan.ReasonPagesCovered); n != 1 {
		t.Errorf("pages-covered limit %d, want 1; limits %+v", n, r.summary.Limits)
	}
}

// A redirect names its target as a document does: a sitemap that redirects to an origin that is
// neither its own nor a start origin is not followed there.
func TestADiscoveryRedirectOffTheCrawlsOriginsIsNotFollowed(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o, elsewhere := site.NewOrigin(), site.NewOrigin()
	o.Robots("User-agent: *\nAllow: /\nSitemap: " + o.URL + "/sitemap.xml\n")
	o.Serve("/sitemap.xml", etiquettetest.Redirect(http.StatusFound, elsewhere.URL+"/sitemap.xml"))
	elsewhere.Robots("User-agent: *\nAllow: /\n")
	elsewhere.Serve("/sitemap.xml", etiquettetest.Sitemap(o.URL+"/listed"))

	r := discover(t, testDoor(t, o, elsewhere), o.URL+"/", plan.Options{}, nil)

	if n := len(elsewhere.Requests()); n != 0 {
		t.Errorf("the other origin received %d requests; want none", n)
	}
	if n := limitOf(r.summary, o.URL, discovered.ReasonOffOrigin); n != 1 {
		t.Errorf("off-origin limit %d, want the redirect; limits %+v", n, r.summary.Limits)
	}
}

// The sitemap walk's refusals — an index that lists itself, indexes nested too deep — are
// counted once per origin and reason.
func TestSitemapWalkRefusalsAreCountedPerOrigin(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin()
	o.Robots("User-agent: *\nAllow: /\nSitemap: " + o.URL + "/i1.xml\n")
	o.Serve("/i1.xml", etiquettetest.SitemapIndex(o.URL+"/i1.xml", o.URL+"/i2.xml"))
	o.Serve("/i2.xml", etiquettetest.SitemapIndex(o.URL+"/i1.xml", o.URL+"/i3.xml"))
	o.Serve("/i3.xml", etiquettetest.SitemapIndex(o.URL+"/i4.xml", o.URL+"/i5.xml"))

	r := discover(t, testDoor(t, o), o.URL+"/", plan.Options{}, nil)

	if n := limitOf(r.summary, o.URL, plan.ReasonSitemapRepeated); n != 2 {
		t.Errorf("sitemap-repeated %d, want 2 (i1 listed by itself and by i2); limits %+v", n, r.summary.Limits)
	}
	if n := limitOf(r.summary, o.URL, plan.ReasonSitemapTooDeep); n != 2 {
		t.Errorf("sitemap-too-deep %d, want 2 (i4 and i5, a fourth level); limits %+v", n, r.summary.Limits)
	}
}
