package etiquette_test

import (
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/cookies"
	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/etiquettetest/matchers"
	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/backoff"
	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// cachedSite is a small site whose pages carry validators: some an ETag, some Last-Modified,
// some both, answered with 304 when a conditional request matches. It can be switched to answer
// 503, and to send a Cache-Control on its pages.
type cachedSite struct {
	*etiquettetest.Origin
	site *etiquettetest.Site
}

const cachedSitePages = 12

var cachedSiteModified = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func newCachedSite() *cachedSite {
	site := newTestSite()
	cs := &cachedSite{Origin: site.NewOrigin(), site: site}
	cs.Serve("/robots.txt", etiquettetest.Text(allowAll).ETag("robots-1"))
	cs.set(false, "")
	return cs
}

// sent is the number of body bytes the site has sent so far.
func (cs *cachedSite) sent() int64 {
	var n int64
	for _, r := range cs.Requests() {
		n += r.BodyBytes
	}
	return n
}

// set makes the site answer its pages (not robots.txt) with 503 when failing, and with
// Cache-Control: pageCC unless it is empty.
func (cs *cachedSite) set(failing bool, pageCC string) {
	page := func(a etiquettetest.Answer) etiquettetest.Answer {
		if failing {
			return etiquettetest.Status(http.StatusServiceUnavailable)
		}
		if pageCC != "" {
			a = a.Header("Cache-Control", pageCC)
		}
		return a
	}
	var links []string
	for i := range cachedSitePages {
		n := fmt.Sprint(i)
		links = append(links, "/page/"+n)
		a := etiquettetest.Text("<html><body><p>" + strings.Repeat("page "+n+" text. ", 400) + "</p></body></html>").ContentType("text/html")
		switch i % 10 % 3 { // by the last digit
		case 0:
			a = a.ETag("p" + n)
		case 1:
			a = a.LastModified(cachedSiteModified)
		default:
			a = a.ETag("p" + n).LastModified(cachedSiteModified)
		}
		cs.Serve("/page/"+n, page(a))
	}
	cs.Serve("/", page(etiquettetest.HTMLPage("index", links...).ETag("index-1")))
}

// cacheRun is one "process": a fresh door with its own clock, robots keeper, event bus and a new
// disk store opened on the shared cache directory.
type cacheRun struct {
	mu     sync.Mutex
	events []events.Event
	policy politeness.Policy
}

func newCacheRun(dir string, cs *cachedSite) *cacheRun {
	store, err := cache.NewDiskStore(dir, cache.DiskOptions{})
	Expect(err).NotTo(HaveOccurred())
	auth := map[string]float64{cs.Addr(): 50}
	clock, err := hostclock.NewLocal(hostclock.Config{Rate: 3, Authorized: auth, Concurrency: 4,
		// The 503 specs are about the cache, not how long the clock pauses the origin.
		Backoff: func(backoff.Class, int, func() float64) time.Duration { return 10 * time.Millisecond },
		Logger:  slog.New(slog.DiscardHandler)})
	Expect(err).NotTo(HaveOccurred())
	run := &cacheRun{}
	bus := &events.Bus{}
	bus.Subscribe(func(e events.Event) {
		if e.Type == events.Response {
			run.mu.Lock()
			run.events = append(run.events, e)
			run.mu.Unlock()
		}
	})
	run.policy = politeness.Policy{Identity: exampleBot(), Clock: clock, Robots: robots.NewKeeper(robots.Options{}),
		CacheStore: store, AuthorizedRates: auth, Rate: 50, Concurrency: 4, Events: bus,
		Logger: slog.New(slog.DiscardHandler)}
	return run
}

func (r *cacheRun) responses() []events.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]events.Event(nil), r.events...)
}

// crawl runs a Colly collector over the whole site and returns the bodies it received by path.
func (r *cacheRun) crawl(cs *cachedSite) map[string]string {
	c := colly.NewCollector()
	Expect(extensions.Polite(c, r.policy)).To(Succeed())
	var mu sync.Mutex
	bodies := map[string]string{}
	c.OnResponse(func(resp *colly.Response) {
		mu.Lock()
		bodies[resp.Request.URL.Path] = string(resp.Body)
		mu.Unlock()
	})
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		_ = e.Request.Visit(e.Attr("href"))
	})
	Expect(c.Visit(cs.URL + "/")).To(Succeed())
	c.Wait()
	return bodies
}

// get reads one URL through a door built from the run's policy.
func (r *cacheRun) get(url string) (int, string) {
	door, err := politeness.NewDoor(r.policy)
	Expect(err).NotTo(HaveOccurred())
	resp, err := door.Client().Get(url)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, string(b)
}

func (r *cacheRun) lastCache(url string) string {
	ev := r.responses()
	for i := len(ev) - 1; i >= 0; i-- {
		if ev[i].URL == url {
			return ev[i].Cache
		}
	}
	return "none"
}

var _ = Describe("a site with ETags and Last-Modified, crawled twice with the same cache directory", func() {
	var (
		cs  *cachedSite
		dir string
	)
	BeforeEach(func() {
		cs = newCachedSite()
		dir = GinkgoT().TempDir()
	})

	It("answers the second crawl from the cache: every request fresh or revalidated, ≥95 % fewer body bytes, every revalidation conditional", func() {
		first := newCacheRun(dir, cs).crawl(cs)
		Expect(first).To(HaveLen(cachedSitePages + 1))
		firstBytes, second := cs.sent(), cs.site.Mark()

		run := newCacheRun(dir, cs) // a new process: new door, collector, keeper, store handle
		bodies := run.crawl(cs)
		Expect(bodies).To(Equal(first), "the second crawl saw the same pages")

		ev := run.responses()
		Expect(ev).To(HaveLen(cachedSitePages + 2)) // robots.txt, the index, the pages
		revalidated := 0
		for _, e := range ev {
			Expect(e.Cache).To(BeElementOf(cache.Fresh, cache.Revalidated), "%s was %q", e.URL, e.Cache)
			if e.Cache == cache.Revalidated {
				revalidated++
			}
		}
		Expect(revalidated).To(BeNumerically(">", 0))

		secondBytes := cs.sent() - firstBytes
		GinkgoWriter.Printf("body bytes sent: first crawl %d, second crawl %d; %d of %d responses revalidated\n",
			firstBytes, secondBytes, revalidated, len(ev))
		Expect(float64(secondBytes)).To(BeNumerically("<=", 0.05*float64(firstBytes)),
			"the site sent %d body bytes the second time, %d the first", secondBytes, firstBytes)

		hits := cs.site.Since(second)
		Expect(hits).To(HaveLen(revalidated), "only revalidations reached the site")
		Expect(hits).To(matchers.RevalidateWith304())
	})

	It("keeps the stored copy through a 503 during revalidation, and the next read is still conditional", func() {
		cs.set(false, "max-age=0")
		page := cs.URL + "/page/0"
		run := newCacheRun(dir, cs)
		status, body := run.get(page)
		Expect(status).To(Equal(http.StatusOK))
		stored := body

		cs.set(true, "max-age=0")
		status, _ = run.get(page)
		Expect(status).To(Equal(http.StatusServiceUnavailable), "no stale-if-error: the site's 503 is passed on")

		cs.set(false, "max-age=0")
		before := cs.site.Mark()
		status, body = newCacheRun(dir, cs).get(page)
		Expect(status).To(Equal(http.StatusOK))
		Expect(body).To(Equal(stored))
		hits := cs.site.Since(before)
		Expect(hits).NotTo(BeEmpty())
		Expect(hits[len(hits)-1].Header.Get("If-None-Match")).To(Equal(`"p0"`), "the validator survived the 503")
	})

	It("serves the stored copy as stale through a 503 when the page allows stale-if-error", func() {
		cs.set(false, "max-age=0, stale-if-error=3600")
		page := cs.URL + "/page/0"
		run := newCacheRun(dir, cs)
		_, stored := run.get(page)

		cs.set(true, "max-age=0, stale-if-error=3600")
		status, body := run.get(page)
		Expect(status).To(Equal(http.StatusOK))
		Expect(body).To(Equal(stored))
		Expect(run.lastCache(page)).To(Equal(cache.Stale))

		cs.set(false, "max-age=0, stale-if-error=3600")
		before := cs.site.Mark()
		run.get(page)
		Expect(run.lastCache(page)).To(Equal(cache.Revalidated))
		Expect(cs.site.Since(before)[0].Header.Get("If-None-Match")).To(Equal(`"p0"`))
	})

	It("never serves a damaged cache entry: each is a miss and the site's own page arrives", func() {
		first := newCacheRun(dir, cs).crawl(cs)
		damaged := 0
		Expect(filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			// Records are packed into files, each longer than 64 bytes: a bit flipped every 64
			// bytes damages every one, and the file is cut short as after a crash.
			for i := 0; i < len(b); i += 64 {
				b[i] ^= 0x20
				damaged++
			}
			return os.WriteFile(p, b[:len(b)*3/4], 0o644)
		})).To(Succeed())
		Expect(damaged).To(BeNumerically(">=", cachedSitePages))

		run := newCacheRun(dir, cs)
		Expect(run.crawl(cs)).To(Equal(first), "every page arrived intact")
		for _, e := range run.responses() {
			Expect(e.Cache).To(Equal(cache.Miss), "%s was served as %q from a damaged entry", e.URL, e.Cache)
		}

		third := newCacheRun(dir, cs)
		Expect(third.crawl(cs)).To(Equal(first))
		for _, e := range third.responses() {
			Expect(e.Cache).To(BeElementOf(cache.Fresh, cache.Revalidated), "the damaged entries were replaced")
		}
	})
})

var _ = Describe("a page that varies on Cookie, crawled with a session-cookie purpose and a disk cache", func() {
	It("writes no cookie value into the cache files, and a later process starts without it", func() {
		const session = "v-session-4711"
		s := newTestSite().NewOrigin().Robots(allowAll).
			Serve("/login", etiquettetest.HTMLPage("welcome").SetCookie(&http.Cookie{Name: "PHPSESSID", Value: session, Path: "/"})).
			// Personalised per session, and cacheable for an hour for that session.
			Otherwise(etiquettetest.HTMLPage("your account").Header("Cache-Control", "max-age=3600").Header("Vary", "Cookie"))
		dir := GinkgoT().TempDir()
		policy := func() politeness.Policy {
			p := isolatedPolicy(s.Addr())
			p.NoCache = false
			store, err := cache.NewDiskStore(dir, cache.DiskOptions{})
			Expect(err).NotTo(HaveOccurred())
			p.CacheStore = store
			p.Cookies = &cookies.Purpose{Categories: []cookies.Category{cookies.Session}}
			return p
		}
		first := colly.NewCollector(colly.AllowURLRevisit())
		Expect(extensions.Polite(first, policy())).To(Succeed())
		for _, p := range []string{"/login", "/account", "/account"} {
			Expect(first.Visit(s.URL + p)).To(Succeed())
		}
		hits := s.Requests()
		Expect(hits[len(hits)-1].Header.Get("Cookie")).To(ContainSubstring(session), "the jar sent the session cookie")
		Expect(countPath(etiquettetest.Paths(hits), "/account")).To(Equal(2), "a response varying on Cookie is not answered from the cache")

		files := 0
		Expect(filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			files++
			b, err := os.ReadFile(p)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(b)).NotTo(ContainSubstring(session), "the session cookie is stored in %s", p)
			return nil
		})).To(Succeed())
		Expect(files).To(BeNumerically(">", 0), "robots.txt and /login were cached")

		second := colly.NewCollector()
		Expect(extensions.Polite(second, policy())).To(Succeed())
		Expect(second.Visit(s.URL + "/account")).To(Succeed())
		hits = s.Requests()
		Expect(hits[len(hits)-1].Target).To(Equal("/account"), "the later process asked the site")
		Expect(hits[len(hits)-1].Header.Values("Cookie")).To(BeEmpty())
	})
})
