package etiquette_test

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/etiquettetest/matchers"
	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/backoff"
	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// robotsClock is the robots.txt keeper's injected time in these specs.
type robotsClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *robotsClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *robotsClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// robotsPolicy gives the specs their own host clock and keeper. The clock's backoff is short:
// the backoff layer re-sends a robots.txt answered with 5xx/429 like any request, and how long
// it pauses is another spec's subject; here only what reaches the site matters.
func robotsPolicy(keeper *robots.Keeper, origins ...*etiquettetest.Origin) politeness.Policy {
	auth := map[string]float64{}
	for _, o := range origins {
		auth[o.Addr()] = 50
	}
	clock, err := hostclock.NewLocal(hostclock.Config{Rate: 3, Authorized: auth, Concurrency: 8,
		Backoff: func(backoff.Class, int, func() float64) time.Duration { return 10 * time.Millisecond },
		Logger:  slog.New(slog.DiscardHandler)})
	Expect(err).NotTo(HaveOccurred())
	return politeness.Policy{Identity: exampleBot(), Clock: clock, Robots: keeper, NoCache: true,
		AuthorizedRates: auth, Rate: 50, Concurrency: 8, Logger: slog.New(slog.DiscardHandler)}
}

// robotsCollector is a Colly collector with the door installed.
func robotsCollector(p politeness.Policy) *colly.Collector {
	c := colly.NewCollector()
	Expect(extensions.Polite(c, p)).To(Succeed())
	return c
}

// refusedByRobots asserts that err is the robots gate's refusal.
func refusedByRobots(err error) *robots.DisallowedError {
	var de *robots.DisallowedError
	ExpectWithOffset(1, errors.As(err, &de)).To(BeTrue(), "want a *robots.DisallowedError, got %v", err)
	return de
}

// newRobotsSite is an origin that answers robots.txt with answer, and a page everywhere else. A
// spec changes the robots.txt answer with Serve("/robots.txt", …).
func newRobotsSite(answer etiquettetest.Answer) *etiquettetest.Origin {
	return newTestSite().NewOrigin().Serve("/robots.txt", answer).Otherwise(etiquettetest.HTMLPage("page"))
}

// serveRobots is robots.txt with body and the given header pairs.
func serveRobots(body string, header ...string) etiquettetest.Answer {
	a := etiquettetest.Text(body)
	for i := 0; i+1 < len(header); i += 2 {
		a = a.Header(header[i], header[i+1])
	}
	return a
}

func countPath(paths []string, p string) int {
	n := 0
	for _, x := range paths {
		if x == p {
			n++
		}
	}
	return n
}

var _ = Describe("a site's robots.txt", func() {
	It("is requested before any other URL of the origin, and once, by 8 concurrent workers", func() {
		// Slow, so that every worker is waiting by the time it answers.
		s := newRobotsSite(serveRobots("User-agent: *\nDisallow: /private\n").Delay(100 * time.Millisecond))
		c := robotsCollector(robotsPolicy(robots.NewKeeper(robots.Options{}), s))
		c.Async = true
		Expect(c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})).To(Succeed())
		var mu sync.Mutex
		var refused []string
		c.OnError(func(r *colly.Response, err error) {
			refusedByRobots(err)
			mu.Lock()
			refused = append(refused, r.Request.URL.Path)
			mu.Unlock()
		})
		for i := range 16 {
			Expect(c.Visit(fmt.Sprintf("%s/page/%d", s.URL, i))).To(Succeed())
			if i%4 == 0 {
				Expect(c.Visit(fmt.Sprintf("%s/private/%d", s.URL, i))).To(Succeed())
			}
		}
		c.Wait()

		paths := etiquettetest.Paths(s.Requests())
		Expect(paths).NotTo(BeEmpty())
		Expect(paths[0]).To(Equal("/robots.txt"))
		Expect(s).To(matchers.FetchRobotsTxtFirst())
		Expect(countPath(paths, "/robots.txt")).To(Equal(1))
		Expect(paths).To(HaveLen(17), "robots.txt and the 16 allowed pages")
		Expect(refused).To(HaveLen(4))
		Expect(s).To(matchers.NeverRequest("/private"))
	})

	DescribeTable("that cannot be read makes the crawler leave the origin alone",
		func(answer etiquettetest.Answer, opts robots.Options) {
			s := newRobotsSite(answer)
			c := robotsCollector(robotsPolicy(robots.NewKeeper(opts), s))
			for _, p := range []string{"/", "/a", "/b"} {
				de := refusedByRobots(c.Visit(s.URL + p))
				Expect(de.Decision.Allowed).To(BeFalse())
			}
			for _, r := range s.Requests() {
				Expect(r.Path()).To(Equal("/robots.txt"), "no request but robots.txt reaches the origin")
			}
		},
		Entry("500", etiquettetest.Status(http.StatusInternalServerError), robots.Options{}),
		Entry("503", etiquettetest.Status(http.StatusServiceUnavailable), robots.Options{}),
		Entry("429, treated like a server error", etiquettetest.Status(http.StatusTooManyRequests), robots.Options{}),
		// A hang: nothing is answered until the keeper gives up.
		Entry("a timeout", serveRobots(allowAll).HoldUntil(nil), robots.Options{FetchTimeout: 300 * time.Millisecond}),
	)

	It("answered 404 lets the crawl proceed", func() {
		s := newRobotsSite(etiquettetest.Status(http.StatusNotFound))
		c := robotsCollector(robotsPolicy(robots.NewKeeper(robots.Options{}), s))
		Expect(c.Visit(s.URL + "/a")).To(Succeed())
		Expect(c.Visit(s.URL + "/private/b")).To(Succeed())
		Expect(etiquettetest.Paths(s.Requests())).To(Equal([]string{"/robots.txt", "/a", "/private/b"}))
	})

	It("is obeyed when reached through 5 redirects, one crossing origins", func() {
		final := newRobotsSite(serveRobots("User-agent: ExampleBot\nDisallow: /private\n"))
		// /robots.txt → /hop/1 → /hop/2 → /hop/3 → /hop/4 → the other origin: five redirects.
		s := newTestSite().NewOrigin().
			Serve("/robots.txt", etiquettetest.Redirect(http.StatusMovedPermanently, "/hop/1")).
			Serve("/hop/4", etiquettetest.Redirect(http.StatusFound, final.URL+"/robots.txt")).
			Otherwise(etiquettetest.HTMLPage("page"))
		for n := 1; n < 4; n++ {
			s.Serve(fmt.Sprintf("/hop/%d", n), etiquettetest.Redirect(http.StatusFound, fmt.Sprintf("/hop/%d", n+1)))
		}
		c := robotsCollector(robotsPolicy(robots.NewKeeper(robots.Options{}), s, final))
		refusedByRobots(c.Visit(s.URL + "/private/x"))
		Expect(c.Visit(s.URL + "/public")).To(Succeed())
		Expect(etiquettetest.Paths(s.Requests())).To(Equal([]string{"/robots.txt", "/hop/1", "/hop/2", "/hop/3", "/hop/4", "/public"}))
		Expect(etiquettetest.Paths(final.Requests())).To(Equal([]string{"/robots.txt"}))
	})

	It("keeps a page that redirects into a disallowed path from being fetched", func() {
		s := newRobotsSite(serveRobots("User-agent: *\nDisallow: /private\n")).
			Serve("/old", etiquettetest.Redirect(http.StatusMovedPermanently, "/private/new"))
		c := robotsCollector(robotsPolicy(robots.NewKeeper(robots.Options{}), s))
		de := refusedByRobots(c.Visit(s.URL + "/old"))
		Expect(de.URL).To(HaveSuffix("/private/new"))
		Expect(de.Decision.Line).To(Equal(2))
		Expect(de.Decision.Rule).To(Equal("Disallow: /private"))
		Expect(etiquettetest.Paths(s.Requests())).To(Equal([]string{"/robots.txt", "/old"}))
	})

	It("is checked for HEAD requests too", func() {
		s := newRobotsSite(serveRobots("User-agent: *\nDisallow: /private\n"))
		c := robotsCollector(robotsPolicy(robots.NewKeeper(robots.Options{}), s))
		refusedByRobots(c.Head(s.URL + "/private/file.pdf"))
		Expect(c.Head(s.URL + "/public/file.pdf")).To(Succeed())
		var methods []string
		for _, r := range s.Requests() {
			methods = append(methods, r.Method+" "+r.Target)
		}
		Expect(methods).To(Equal([]string{"GET /robots.txt", "HEAD /public/file.pdf"}))
	})

	Describe("after its lifetime", func() {
		var (
			s   *etiquettetest.Origin
			clk *robotsClock
			c   *colly.Collector
		)
		BeforeEach(func() {
			s = newRobotsSite(serveRobots("User-agent: *\nDisallow: /a\n", "Cache-Control", "max-age=7200"))
			clk = &robotsClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
			c = robotsCollector(robotsPolicy(robots.NewKeeper(robots.Options{Now: clk.Now}), s))
			c.AllowURLRevisit = true
			refusedByRobots(c.Visit(s.URL + "/a"))
			Expect(c.Visit(s.URL + "/b")).To(Succeed())
		})

		It("fetches it again, and a changed robots.txt changes the decisions", func() {
			s.Serve("/robots.txt", serveRobots("User-agent: *\nDisallow: /b\n"))
			clk.Advance(119 * time.Minute)
			refusedByRobots(c.Visit(s.URL + "/a")) // still the first file
			clk.Advance(time.Minute)
			Expect(c.Visit(s.URL + "/a")).To(Succeed())
			refusedByRobots(c.Visit(s.URL + "/b"))
			Expect(etiquettetest.Paths(s.Requests())).To(Equal([]string{"/robots.txt", "/b", "/robots.txt", "/a"}))
		})

		It("keeps the last good copy when the refresh answers 503", func() {
			s.Serve("/robots.txt", etiquettetest.Status(http.StatusServiceUnavailable))
			clk.Advance(25 * time.Hour)
			de := refusedByRobots(c.Visit(s.URL + "/a"))
			Expect(de.Decision.Reason).To(ContainSubstring("RFC 9309 §2.4"))
			Expect(c.Visit(s.URL + "/b")).To(Succeed())
			paths := etiquettetest.Paths(s.Requests())
			Expect(paths[len(paths)-1]).To(Equal("/b"))
			Expect(s).To(matchers.NeverRequest("/a$"))
			Expect(countPath(paths, "/b")).To(Equal(2))
		})
	})
})

// agedStore is a cache store read a while after it was written: every entry it returns looks
// that much older, as it would to a process started later on the same cache directory.
type agedStore struct {
	cache.Store
	by time.Duration
}

func (a agedStore) Get(key string) (*cache.Entry, io.ReadCloser, error) {
	e, body, err := a.Store.Get(key)
	if err != nil {
		return nil, nil, err
	}
	e.RequestTime, e.ResponseTime = e.RequestTime.Add(-a.by), e.ResponseTime.Add(-a.by)
	if d, err := http.ParseTime(e.Header.Get("Date")); err == nil {
		e.Header.Set("Date", d.Add(-a.by).Format(http.TimeFormat))
	}
	return e, body, nil
}

var _ = Describe("a robots.txt cached on disk with a year's max-age and no validators", func() {
	It("is fetched again by a process started a day later (RFC 9309 §2.4)", func() {
		s := newRobotsSite(serveRobots("User-agent: *\nDisallow: /private\n", "Cache-Control", "max-age=31536000"))
		dir := GinkgoT().TempDir()
		process := func(later time.Duration) *colly.Collector {
			p := robotsPolicy(robots.NewKeeper(robots.Options{}), s)
			store, err := cache.NewDiskStore(dir, cache.DiskOptions{})
			Expect(err).NotTo(HaveOccurred())
			p.NoCache, p.CacheStore = false, agedStore{store, later}
			return robotsCollector(p)
		}
		Expect(process(0).Visit(s.URL + "/a")).To(Succeed())
		Expect(process(23 * time.Hour).Visit(s.URL + "/b")).To(Succeed())
		Expect(etiquettetest.Paths(s.Requests())).To(Equal([]string{"/robots.txt", "/a", "/b"}), "a copy under a day old is reused")

		Expect(process(25 * time.Hour).Visit(s.URL + "/c")).To(Succeed())
		Expect(etiquettetest.Paths(s.Requests())).To(Equal([]string{"/robots.txt", "/a", "/b", "/robots.txt", "/c"}))
	})
})

var _ = Describe("an origin that refuses connections", func() {
	It("is left alone, with an error that says robots.txt is unreachable rather than that a rule forbids the page", func() {
		closed := etiquettetest.NewSite()
		gone := closed.NewOrigin()
		url := gone.URL + "/page"
		closed.Close()
		c := robotsCollector(robotsPolicy(robots.NewKeeper(robots.Options{}), gone))
		err := c.Visit(url)
		de := refusedByRobots(err)
		Expect(de.Decision.Cause).To(ContainSubstring("connection refused"))
		Expect(err.Error()).To(ContainSubstring("robots.txt unreachable ("))
		Expect(err.Error()).To(ContainSubstring("nothing is fetched from this origin until it can be read"))
		Expect(err.Error()).NotTo(ContainSubstring("disallows"))
	})
})
