package matchers_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"

	"github.com/politecrawl/etiquette/cookies"
	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/etiquettetest/matchers"
	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/robots"
)

const (
	botUA     = "ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org)"
	browserUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36"
)

// shop is the site both crawlers visit: a shop whose robots.txt keeps crawlers out of /private,
// whose home page sets a tracking, a consent and a session cookie and links to three slow pages
// (0.8 s each, so a crawler with two requests in flight overlaps them; the first request for /c
// is answered 429 with Retry-After: 1), to a redirect onto a blog origin and to its
// security.txt. Pages carry ETags. /slow holds its answers until released.
type shop struct {
	site       *etiquettetest.Site
	home, blog *etiquettetest.Origin
	release    chan struct{}
}

func newShop() *shop {
	s := &shop{site: etiquettetest.NewSite(), release: make(chan struct{})}
	DeferCleanup(s.site.Close)
	s.home, s.blog = s.site.NewOrigin(), s.site.NewOrigin()
	s.home.Robots("User-agent: *\nDisallow: /private\n")
	s.home.Serve("/", etiquettetest.HTMLPage("Shop", "/a", "/b", "/c", "/private/x", "/moved", "/.well-known/security.txt").ETag("home-1").
		SetCookie(etiquettetest.TrackingCookie()).SetCookie(etiquettetest.ConsentCookie()).SetCookie(etiquettetest.SessionCookie()))
	for _, p := range []string{"/a", "/b", "/c"} {
		s.home.Serve(p, etiquettetest.HTMLPage("Page "+p).ETag(p[1:]+"-1").Delay(800*time.Millisecond))
	}
	s.home.Nth("/c", 1, etiquettetest.Status(http.StatusTooManyRequests).RetryAfter(time.Second))
	s.home.Serve("/private/x", etiquettetest.HTMLPage("Secret"))
	s.home.Serve("/moved", etiquettetest.Redirect(http.StatusFound, s.blog.URL+"/post"))
	s.home.Serve("/.well-known/security.txt", etiquettetest.Text("Contact: mailto:security@example.org\n"))
	s.home.Serve("/slow", etiquettetest.Text("at last").HoldUntil(s.release))
	s.blog.Robots("User-agent: *\nAllow: /\n")
	s.blog.Serve("/post", etiquettetest.HTMLPage("Post").ETag("post-1"))
	return s
}

// politePolicy is the door as a crawler author configures it, with its own host clock (3 starts
// per second, 2 in flight), robots.txt keeper and memory cache, so no other spec shares them.
func politePolicy() politeness.Policy {
	clock, err := hostclock.NewLocal(hostclock.Config{Logger: slog.New(slog.DiscardHandler)})
	Expect(err).NotTo(HaveOccurred())
	return politeness.Policy{
		Identity: identity.Identity{Profile: identity.Generic, Token: "ExampleBot", Version: "1.0",
			InfoURL: "https://example.org/bot", Contact: "bot@example.org"},
		Clock: clock, Robots: robots.NewKeeper(robots.Options{}), CacheStore: cache.NewMemoryStore(0),
		Logger: slog.New(slog.DiscardHandler),
	}
}

// politeCrawl crawls from start with a Colly collector made polite, following every link.
func politeCrawl(p politeness.Policy, start string) {
	c := colly.NewCollector(colly.Async(true))
	Expect(extensions.Polite(c, p)).To(Succeed())
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
	Expect(c.Visit(start)).To(Succeed())
	c.Wait()
}

// impolite is what a careless scraper does: a browser User-Agent, a cookie jar, no robots.txt,
// ten requests a second, Retry-After ignored, three requests at once, a guess at a
// /.well-known/ URL, and a second round that downloads everything again.
func impolite(s *shop) (secondRound etiquettetest.Mark) {
	jar, err := cookiejar.New(nil)
	Expect(err).NotTo(HaveOccurred())
	client := &http.Client{Jar: jar}
	get := func(url string) int {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("User-Agent", browserUA)
		resp, err := client.Do(req)
		Expect(err).NotTo(HaveOccurred())
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	get(s.home.URL + "/") // for its cookies
	// The ticker paces the load, as a scraper's loop would: a request starts every 100 ms,
	// whether or not the previous one was answered. Nothing waits on it for a result.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var wg sync.WaitGroup
	for _, path := range []string{"/a", "/c", "/private/x", "/moved", "/.well-known/ai-plugin.json", "/b"} {
		<-tick.C
		wg.Go(func() {
			defer GinkgoRecover()
			if get(s.home.URL+path) == http.StatusTooManyRequests {
				get(s.home.URL + path) // at once
			}
		})
	}
	wg.Wait()
	before := len(s.site.Requests())
	for range 3 {
		wg.Go(func() {
			defer GinkgoRecover()
			get(s.home.URL + "/slow")
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	Expect(s.site.Await(ctx, before+3)).To(Succeed(), "three requests for /slow held at once")
	close(s.release)
	wg.Wait()
	secondRound = s.site.Mark()
	for _, path := range []string{"/", "/a", "/b"} {
		<-tick.C
		get(s.home.URL + path)
	}
	return secondRound
}

// failureOf returns the failure message of m on actual, which m must reject.
func failureOf(actual any, m types.GomegaMatcher) string {
	ok, err := m.Match(actual)
	Expect(err).NotTo(HaveOccurred())
	Expect(ok).To(BeFalse(), "the matcher passed")
	return m.FailureMessage(actual)
}

var _ = Describe("a scraper made polite with extensions.Polite, crawling twice", Ordered, func() {
	var s *shop
	var secondCrawl etiquettetest.Mark

	BeforeAll(func() {
		s = newShop()
		p := politePolicy()
		politeCrawl(p, s.home.URL+"/")
		secondCrawl = s.site.Mark()
		politeCrawl(p, s.home.URL+"/")
		Expect(etiquettetest.Paths(s.site.Requests())).To(ContainElements("/robots.txt", "/", "/a", "/b", "/c", "/moved", "/post", "/.well-known/security.txt"))
		Expect(s.site.Since(secondCrawl)).NotTo(BeEmpty())
	})

	It("identifies every request, robots.txt and the redirect hop included", func() {
		Expect(s.site).To(matchers.IdentifyEveryRequestAs(botUA, "bot@example.org"))
	})
	It("reads robots.txt first at both origins", func() {
		Expect(s.site).To(matchers.FetchRobotsTxtFirst())
	})
	It("never asks for what robots.txt disallows", func() {
		Expect(s.site).To(matchers.NeverRequest("/private"))
	})
	It("starts at most 3 requests per second per host", func() {
		Expect(s.site).To(matchers.StartAtMostPerSecond(3))
	})
	It("keeps at most 2 requests in flight — and did overlap two", func() {
		Expect(s.site).To(matchers.KeepAtMostInFlight(2))
		Expect(s.site).NotTo(matchers.KeepAtMostInFlight(1))
	})
	It("waits out the Retry-After of the 429", func() {
		Expect(s.home.Requests()).To(ContainElement(HaveField("Status", http.StatusTooManyRequests)))
		Expect(s.site).To(matchers.WaitAfterRetryAfter())
	})
	It("sends no cookie although the site sets three", func() {
		Expect(s.site).To(matchers.SendNoCookies())
		Expect(s.site).To(matchers.SendOnlyCookies("PHPSESSID"))
	})
	It("revalidates every page of the second crawl and is answered 304", func() {
		Expect(s.site.Since(secondCrawl)).To(ContainElement(HaveField("Status", http.StatusNotModified)))
		Expect(s.site.Since(secondCrawl)).To(matchers.RevalidateWith304())
	})
	It("asks for the /.well-known/ URL the home page links to, and for no other", func() {
		Expect(s.site).To(matchers.ProbeNoWellKnown())
	})
})

var _ = Describe("a door whose task declares the session cookie", func() {
	It("sends that cookie and no other", func() {
		s := newShop()
		p := politePolicy()
		p.Cookies = &cookies.Purpose{Categories: []cookies.Category{cookies.Session}}
		p.Rate, p.AuthorizedRates = 20, map[string]float64{s.home.Addr(): 20}
		door, err := politeness.NewDoor(p)
		Expect(err).NotTo(HaveOccurred())
		for _, path := range []string{"/", "/moved"} {
			resp, err := door.Client().Get(s.home.URL + path)
			Expect(err).NotTo(HaveOccurred())
			resp.Body.Close()
		}
		Expect(s.site).NotTo(matchers.SendNoCookies(), "the session cookie went back")
		Expect(s.site).To(matchers.SendOnlyCookies("PHPSESSID"))
	})
})

var _ = Describe("a deliberately impolite client: a browser User-Agent, cookies, no robots.txt, 10 starts/s", Ordered, func() {
	var s *shop
	var secondRound etiquettetest.Mark

	BeforeAll(func() {
		s = newShop()
		secondRound = impolite(s)
	})

	It("fails IdentifyEveryRequestAs, quoting the User-Agent it sent", func() {
		msg := failureOf(s.site, matchers.IdentifyEveryRequestAs(botUA, "bot@example.org"))
		Expect(msg).To(HavePrefix(`expected every request to identify as User-Agent "` + botUA + `" with From "bot@example.org"; broken by`))
		Expect(msg).To(MatchRegexp(`\n  \d\d:\d\d:\d\d\.\d{3} ` + s.home.URL + ` GET /a  User-Agent "Mozilla/5\.0 \(Windows NT 10\.0.*", From none`))
		Expect(msg).To(ContainSubstring(s.blog.URL + " GET /post  User-Agent"))
	})
	It("fails FetchRobotsTxtFirst at both origins", func() {
		msg := failureOf(s.site, matchers.FetchRobotsTxtFirst())
		Expect(msg).To(ContainSubstring(s.home.URL + " GET /  robots.txt was never answered at this origin"))
		Expect(msg).To(ContainSubstring(s.blog.URL + " GET /post  robots.txt was never answered at this origin"))
	})
	It("fails NeverRequest for the disallowed path", func() {
		msg := failureOf(s.site, matchers.NeverRequest("/private"))
		Expect(msg).To(ContainSubstring("broken by 1 of"))
		Expect(msg).To(ContainSubstring(s.home.URL + " GET /private/x  matches /private"))
	})
	It("fails StartAtMostPerSecond(3), listing the busiest second", func() {
		msg := failureOf(s.site, matchers.StartAtMostPerSecond(3))
		Expect(msg).To(MatchRegexp(`GET /a  start \d+ of (\d\d|[4-9]) within one second from`))
	})
	It("fails KeepAtMostInFlight(2) when three requests are held at once", func() {
		msg := failureOf(s.site, matchers.KeepAtMostInFlight(2))
		Expect(msg).To(MatchRegexp(`GET /slow  arrived while 2 others were in flight: GET /slow since .*; GET /slow since `))
	})
	It("fails WaitAfterRetryAfter for the immediate retry of the 429", func() {
		msg := failureOf(s.site, matchers.WaitAfterRetryAfter())
		Expect(msg).To(MatchRegexp(s.home.URL + ` GET /\S+  arrived \d+(\.\d+)?[mµ]?s after GET /c was answered 429 with Retry-After "1" at .*; the site asked for 1s`))
	})
	It("fails SendNoCookies and SendOnlyCookies, naming the cookies sent", func() {
		Expect(failureOf(s.site, matchers.SendNoCookies())).To(ContainSubstring(s.home.URL + " GET /a  Cookie \""))
		msg := failureOf(s.site, matchers.SendOnlyCookies("PHPSESSID"))
		Expect(msg).To(MatchRegexp(`GET /a  Cookie ".*" \(not allowed: .*_ga`))
		Expect(msg).To(MatchRegexp(`not allowed: .*CookieConsent`))
		Expect(msg).NotTo(MatchRegexp(`not allowed: [^)]*PHPSESSID`))
	})
	It("fails RevalidateWith304 for the second round, which downloads everything again", func() {
		msg := failureOf(s.site.Since(secondRound), matchers.RevalidateWith304())
		Expect(msg).To(ContainSubstring("broken by 3 of 3 requests"))
		Expect(msg).To(ContainSubstring(s.home.URL + ` GET /a  unconditional (no If-None-Match or If-Modified-Since) though the site gives ETag "a-1"; answered 200`))
	})
	It("fails ProbeNoWellKnown for the guessed URL only", func() {
		msg := failureOf(s.site, matchers.ProbeNoWellKnown())
		Expect(msg).To(ContainSubstring("broken by 1 of"))
		Expect(msg).To(ContainSubstring(s.home.URL + " GET /.well-known/ai-plugin.json  a probe: no earlier answer of the site mentioned this URL"))
	})
})

var _ = Describe("a matcher given nothing to judge", func() {
	It("is an error, not a pass, for an empty recording or something that is not one", func() {
		Expect(InterceptGomegaFailure(func() { Expect([]etiquettetest.Request{}).To(matchers.SendNoCookies()) })).
			To(MatchError(ContainSubstring("the recording holds no requests")))
		Expect(InterceptGomegaFailure(func() { Expect([]etiquettetest.Request{}).NotTo(matchers.SendNoCookies()) })).
			To(MatchError(ContainSubstring("the recording holds no requests")))
		Expect(InterceptGomegaFailure(func() { Expect("a string").To(matchers.SendNoCookies()) })).
			To(MatchError(ContainSubstring("got string")))
	})
	It("is an error for a site that stopped recording", func() {
		Expect(InterceptGomegaFailure(func() { Expect(overflowed{}).To(matchers.SendNoCookies()) })).
			To(MatchError(ContainSubstring("the site answered 7 requests beyond the 100000 it records")))
	})
})

// overflowed is a site whose recording was full before the crawl ended.
type overflowed struct{}

func (overflowed) Requests() []etiquettetest.Request { return []etiquettetest.Request{{}} }
func (overflowed) Unrecorded() int                   { return 7 }
