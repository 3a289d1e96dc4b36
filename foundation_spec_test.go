package etiquette_test

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"path/filepath"
	"sync"

	"github.com/gocolly/colly/v2"
	collyext "github.com/gocolly/colly/v2/extensions"
	"github.com/gocolly/colly/v2/storage"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/etiquettetest/matchers"
	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/kind"
)

const exampleUA = "ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org)"

var _ = Describe("a Colly scraper with extensions.Polite", func() {
	var (
		site        *etiquettetest.Site
		home, other *etiquettetest.Origin
		c           *colly.Collector
	)

	BeforeEach(func() {
		site = newTestSite()
		other = site.NewOrigin().
			Serve("/robots.txt", etiquettetest.Text(allowAll).SetCookie(&http.Cookie{Name: "robots_seen", Value: "1"})).
			Otherwise(etiquettetest.HTMLPage("elsewhere"))
		// Every answer of home sets a session cookie.
		session := func(a etiquettetest.Answer) etiquettetest.Answer {
			return a.SetCookie(&http.Cookie{Name: "PHPSESSID", Value: "abc"})
		}
		home = site.NewOrigin().
			Serve("/robots.txt", session(etiquettetest.Text("User-agent: *\nDisallow: /private\n"))).
			Serve("/", session(etiquettetest.HTMLPage("home", "/moved", "/away", "/flaky"))).
			Serve("/moved", session(etiquettetest.Redirect(http.StatusMovedPermanently, "/target"))).
			Serve("/away", session(etiquettetest.Redirect(http.StatusFound, other.URL+"/there"))).
			Serve("/post", session(etiquettetest.Redirect(http.StatusTemporaryRedirect, "/posted"))).
			Serve("/flaky", session(etiquettetest.HTMLPage("ok now"))).
			Nth("/flaky", 1, session(etiquettetest.Status(http.StatusInternalServerError))).
			Otherwise(session(etiquettetest.HTMLPage("page")))
		c = colly.NewCollector()
	})

	everyRequestIdentified := func(s *etiquettetest.Origin) {
		Expect(s).To(matchers.IdentifyEveryRequestAs(exampleUA, "bot@example.org"))
		Expect(s).To(matchers.SendNoCookies())
		for _, r := range s.Requests() {
			Expect(r.Header.Values("X-Etiquette-Kind")).To(BeEmpty(), "%s", r)
		}
	}

	Context("crawling a site with redirects, a retry, a POST and a clone", func() {
		It("sends the configured User-Agent and From on every request and every hop, and never a Cookie", func() {
			Expect(extensions.Polite(c, isolatedPolicy(home.Addr(), other.Addr()))).To(Succeed())
			// Things a scraper might do that must not change what the site sees.
			c.OnRequest(func(r *colly.Request) {
				r.Headers.Set("User-Agent", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/120.0")
				r.Headers.Set("Cookie", "tracking=1")
			})
			collyext.RandomUserAgent(c)
			c.OnHTML("a[href]", func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
			retried := false
			c.OnError(func(r *colly.Response, err error) {
				if r.Request.URL.Path == "/flaky" && !retried {
					retried = true
					Expect(r.Request.Retry()).To(Succeed())
				}
			})

			Expect(c.Visit(home.URL + "/")).To(Succeed())
			Expect(c.Post(home.URL+"/post", map[string]string{"q": "1"})).To(Succeed())
			clone := c.Clone()
			Expect(clone.Visit(home.URL + "/from-clone")).To(Succeed())
			c.Wait()

			Expect(etiquettetest.Paths(home.Requests())).To(ContainElements("/robots.txt", "/", "/moved", "/target", "/away", "/flaky", "/post", "/posted", "/from-clone"))
			Expect(etiquettetest.Paths(other.Requests())).To(ContainElements("/robots.txt", "/there"))
			Expect(retried).To(BeTrue())
			Expect(countPath(etiquettetest.Paths(home.Requests()), "/flaky")).To(Equal(2), "the retry reached the site")
			var posted etiquettetest.Request
			for _, r := range home.Requests() {
				if r.Target == "/posted" {
					posted = r
				}
			}
			Expect(posted.Method).To(Equal(http.MethodPost), "a 307 keeps the method")
			everyRequestIdentified(home)
			everyRequestIdentified(other)
		})

		It("asks for robots.txt before any other request to an origin", func() {
			Expect(extensions.Polite(c, isolatedPolicy(home.Addr(), other.Addr()))).To(Succeed())
			Expect(c.Visit(home.URL + "/away")).To(Succeed())
			Expect(etiquettetest.Paths(home.Requests())).To(HaveExactElements("/robots.txt", "/away"))
			Expect(etiquettetest.Paths(other.Requests())).To(HaveExactElements("/robots.txt", "/there"))
			Expect(site).To(matchers.FetchRobotsTxtFirst())
		})

		It("does not fetch a page robots.txt disallows, and says which rule", func() {
			Expect(extensions.Polite(c, isolatedPolicy(home.Addr()))).To(Succeed())
			var got error
			c.OnError(func(_ *colly.Response, err error) { got = err })
			_ = c.Visit(home.URL + "/private/x")
			Expect(home).To(matchers.NeverRequest("/private/x"))
			Expect(got).To(HaveOccurred())
		})
	})

	Context("when Polite is called again", func() {
		It("replaces the door, after an earlier success or an earlier refusal", func() {
			Expect(extensions.Polite(c, politeness.Policy{})).To(MatchError(identity.ErrNoIdentity))
			Expect(extensions.Polite(c, isolatedPolicy(home.Addr()))).To(Succeed())
			Expect(c.Visit(home.URL + "/first")).To(Succeed())
			p := isolatedPolicy(home.Addr())
			p.Identity.Version = "2.0"
			Expect(extensions.Polite(c, p)).To(Succeed())
			Expect(extensions.Status(c)).To(Succeed())
			Expect(c.Visit(home.URL + "/second")).To(Succeed())
			last := home.Requests()[len(home.Requests())-1]
			Expect(last.Target).To(Equal("/second"))
			Expect(last.Header.Get("User-Agent")).To(HavePrefix("ExampleBot/2.0 "))
		})

		It("keeps clones made before it working, with the new door", func() {
			Expect(extensions.Polite(c, isolatedPolicy(home.Addr()))).To(Succeed())
			clone := c.Clone()
			p := isolatedPolicy(home.Addr())
			p.Identity.Version = "3.0"
			Expect(extensions.Polite(c, p)).To(Succeed())
			Expect(clone.Visit(home.URL + "/from-old-clone")).To(Succeed())
			last := home.Requests()[len(home.Requests())-1]
			Expect(last.Target).To(Equal("/from-old-clone"))
			Expect(last.Header.Get("User-Agent")).To(HavePrefix("ExampleBot/3.0 "))
			Expect(extensions.Status(clone)).To(Succeed())
		})
	})

	Context("with extensions.Polite and a policy naming only the identity (the defaults)", func() {
		It("identifies every request and caches on disk in the user cache directory", func() {
			cacheHome := GinkgoT().TempDir()
			GinkgoT().Setenv("XDG_CACHE_HOME", cacheHome)
			Expect(extensions.Polite(c, politeness.Policy{Identity: exampleBot()})).To(Succeed())
			Expect(c.Visit(home.URL + "/identified")).To(Succeed())
			Expect(etiquettetest.Paths(home.Requests())).To(HaveExactElements("/robots.txt", "/identified"))
			everyRequestIdentified(home)
			var files []string
			Expect(filepath.WalkDir(cacheHome, func(path string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					files = append(files, path)
				}
				return err
			})).To(Succeed())
			Expect(files).NotTo(BeEmpty(), "a crawl's default cache is on disk, under $XDG_CACHE_HOME/etiquette")
			Expect(files[0]).To(HavePrefix(filepath.Join(cacheHome, "etiquette")))
		})
	})

	Context("with a collector marked as a sitemap reader", func() {
		It("reports its requests and its clones' as sitemap requests, and the mark never leaves the process", func() {
			p := isolatedPolicy(home.Addr())
			p.Events = &events.Bus{}
			var mu sync.Mutex
			kinds := map[string]kind.Kind{}
			p.Events.Subscribe(func(e events.Event) {
				if e.Type == events.Response {
					mu.Lock()
					kinds[e.URL] = e.Kind
					mu.Unlock()
				}
			})
			Expect(extensions.Polite(c, p)).To(Succeed())
			extensions.Kind(c, kind.Sitemap)
			Expect(c.Visit(home.URL + "/sitemap.xml")).To(Succeed())
			Expect(c.Clone().Visit(home.URL + "/sitemap-2.xml")).To(Succeed())
			pages := c.Clone()
			extensions.Kind(pages, kind.HTML)
			Expect(pages.Visit(home.URL + "/page")).To(Succeed())
			Expect(c.Visit(home.URL + "/sitemap-3.xml")).To(Succeed())
			mu.Lock()
			defer mu.Unlock()
			Expect(kinds).To(HaveKeyWithValue(home.URL+"/sitemap.xml", kind.Sitemap))
			Expect(kinds).To(HaveKeyWithValue(home.URL+"/sitemap-2.xml", kind.Sitemap), "a clone keeps the mark")
			Expect(kinds).To(HaveKeyWithValue(home.URL+"/page", kind.HTML), "a clone marked otherwise")
			Expect(kinds).To(HaveKeyWithValue(home.URL+"/sitemap-3.xml", kind.Sitemap), "marking the clone left its parent alone")
			Expect(kinds).To(HaveKeyWithValue(home.URL+"/robots.txt", kind.Robots))
			everyRequestIdentified(home)
		})
	})

	Context("when a scraper tries to send cookies", func() {
		It("strips cookies set through colly.Headers, a callback or the collector's storage", func() {
			c = colly.NewCollector(colly.Headers(map[string]string{"Cookie": "from=headers"}))
			Expect(extensions.Polite(c, isolatedPolicy(home.Addr()))).To(Succeed())
			Expect(c.SetStorage(&storage.InMemoryStorage{})).To(Succeed())
			u, _ := url.Parse(home.URL)
			Expect(c.SetCookies(home.URL, []*http.Cookie{{Name: "stored", Value: "1", Path: "/"}})).To(Succeed())
			c.OnRequest(func(r *colly.Request) { r.Headers.Add("Cookie", "from=callback") })
			Expect(c.Visit(home.URL + "/one")).To(Succeed())
			Expect(c.Visit(home.URL + "/two")).To(Succeed())
			everyRequestIdentified(home)
			Expect(c.Cookies(u.String())).NotTo(ContainElement(HaveField("Name", "PHPSESSID")),
				"the site's Set-Cookie never reaches a jar above the door")
		})
	})

	Context("without an identity", func() {
		It("refuses to start and says what to set", func() {
			err := extensions.Polite(c, politeness.Policy{})
			Expect(err).To(MatchError(identity.ErrNoIdentity))
			Expect(err.Error()).To(ContainSubstring("Identity.Token"))
			Expect(c.Visit(home.URL+"/")).To(MatchError(identity.ErrNoIdentity), "a scraper that ignores the error sends nothing")
			Expect(home.Requests()).To(BeEmpty())
			_, err = politeness.NewDoor(politeness.Policy{})
			Expect(errors.Is(err, identity.ErrNoIdentity)).To(BeTrue())
		})

		It("refuses an identity that disguises itself as a browser", func() {
			browser := "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"
			_, _, err := identity.Parse(browser, identity.Generic)
			Expect(err).To(MatchError(identity.ErrInvalid))
			id := exampleBot()
			id.Verbatim = browser
			err = extensions.Polite(c, politeness.Policy{Identity: id})
			Expect(err).To(MatchError(identity.ErrInvalid))
			id = exampleBot()
			id.Token = "Chrome"
			Expect(extensions.Polite(c, politeness.Policy{Identity: id})).To(MatchError(identity.ErrInvalid))
			Expect(c.Visit(home.URL+"/")).To(MatchError(identity.ErrInvalid), "Colly's own UA must not be used instead")
			Expect(home.Requests()).To(BeEmpty())
		})
	})

	Context("configured with a proxy through the policy", func() {
		It("identifies itself to the proxy too, on plain requests and on CONNECT", func() {
			// Refuse everything: the spec only looks at what the proxy was sent.
			proxy := site.NewOrigin().Otherwise(etiquettetest.Status(http.StatusForbidden))
			// An https URL is reached through a CONNECT tunnel, which the proxy refuses, so the
			// origin behind it is never contacted and need not speak TLS.
			tunnelled := site.NewOrigin()
			p := isolatedPolicy(home.Addr(), tunnelled.Addr())
			proxyURL, _ := url.Parse(proxy.URL)
			p.Proxy = http.ProxyURL(proxyURL)
			Expect(extensions.Polite(c, p)).To(Succeed())
			_ = c.Visit(home.URL + "/via-proxy")
			_ = c.Visit("https://" + tunnelled.Addr() + "/tunnelled")
			Expect(proxy).To(matchers.IdentifyEveryRequestAs(exampleUA, ""))
			methods := map[string]bool{}
			for _, r := range proxy.Requests() {
				methods[r.Method] = true
			}
			Expect(methods).To(HaveKey(http.MethodConnect))
			Expect(methods).To(HaveKey(http.MethodGet))
			Expect(home.Requests()).To(BeEmpty(), "everything went through the proxy")
			Expect(tunnelled.Requests()).To(BeEmpty(), "the tunnel was refused")
		})

		It("identifies itself on CONNECT also when the base transport computes its own CONNECT headers", func() {
			proxy := site.NewOrigin().Otherwise(etiquettetest.Status(http.StatusForbidden))
			tunnelled := site.NewOrigin()
			p := isolatedPolicy(tunnelled.Addr())
			proxyURL, _ := url.Parse(proxy.URL)
			p.Proxy = http.ProxyURL(proxyURL)
			p.BaseTransport = &http.Transport{GetProxyConnectHeader: func(context.Context, *url.URL, string) (http.Header, error) {
				return http.Header{"Proxy-Authorization": {"Basic dXNlcjpwYXNz"}}, nil
			}}
			Expect(extensions.Polite(c, p)).To(Succeed())
			_ = c.Visit("https://" + tunnelled.Addr() + "/tunnelled")
			Expect(proxy).To(matchers.IdentifyEveryRequestAs(exampleUA, ""))
			for _, r := range proxy.Requests() {
				Expect(r.Method).To(Equal(http.MethodConnect))
				Expect(r.Header.Get("Proxy-Authorization")).NotTo(BeEmpty(), "the transport's own header is kept")
			}
			Expect(tunnelled.Requests()).To(BeEmpty(), "the tunnel was refused")
		})
	})

	DescribeTable("a Colly setter that replaces or weakens the door after Polite",
		func(weaken func(c *colly.Collector, proxyURL string), what string) {
			// A proxy that would forward anything it got: the setters below point Colly at it.
			proxy := site.NewOrigin().Otherwise(etiquettetest.Text("proxied"))
			Expect(extensions.Polite(c, isolatedPolicy(home.Addr()))).To(Succeed())
			Expect(c.Visit(home.URL + "/before")).To(Succeed())
			Expect(extensions.Status(c)).To(Succeed())

			weaken(c, proxy.URL)
			clone := c.Clone()
			err := c.Visit(home.URL + "/after")
			Expect(err).To(MatchError(extensions.ErrDoorBypassed))
			Expect(err.Error()).To(ContainSubstring(what))
			Expect(clone.Visit(home.URL + "/clone-after")).To(MatchError(extensions.ErrDoorBypassed))
			Expect(extensions.Status(c)).To(MatchError(extensions.ErrDoorBypassed))
			Expect(etiquettetest.Paths(home.Requests())).To(HaveExactElements("/robots.txt", "/before"), "nothing reached the site outside the door")
			Expect(proxy.Requests()).To(BeEmpty(), "nothing reached the proxy outside the door")
		},
		Entry("SetProxy", func(c *colly.Collector, proxy string) { Expect(c.SetProxy(proxy)).To(Succeed()) }, "Policy.Proxy"),
		Entry("SetProxyFunc", func(c *colly.Collector, proxy string) {
			u, _ := url.Parse(proxy)
			c.SetProxyFunc(http.ProxyURL(u))
		}, "Policy.Proxy"),
		Entry("SetClient", func(c *colly.Collector, _ string) { c.SetClient(&http.Client{}) }, "transport was replaced"),
		Entry("WithTransport", func(c *colly.Collector, _ string) { c.WithTransport(http.DefaultTransport) }, "transport was replaced"),
		Entry("WithTransport on a clone", func(c *colly.Collector, _ string) { c.Clone().WithTransport(http.DefaultTransport) }, "transport was replaced"),
		Entry("SetRequestTimeout", func(c *colly.Collector, _ string) { c.SetRequestTimeout(5e9) }, "Policy.Timeout"),
	)
})
