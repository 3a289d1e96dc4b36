package etiquette_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sync"

	"github.com/gocolly/colly/v2"
	collyext "github.com/gocolly/colly/v2/extensions"
	"github.com/gocolly/colly/v2/storage"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/kind"
)

const exampleUA = "ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org)"

var _ = Describe("a Colly scraper with extensions.Polite", func() {
	var (
		home, other *site
		c           *colly.Collector
		flakyOnce   sync.Once
	)

	BeforeEach(func() {
		flakyOnce = sync.Once{}
		other = newSite(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.SetCookie(w, &http.Cookie{Name: "robots_seen", Value: "1"})
				fmt.Fprint(w, "User-agent: *\nAllow: /\n")
			default:
				fmt.Fprint(w, "<html><body>elsewhere</body></html>")
			}
		})
		home = newSite(func(w http.ResponseWriter, r *http.Request) {
			http.SetCookie(w, &http.Cookie{Name: "PHPSESSID", Value: "abc"})
			switch r.URL.Path {
			case "/robots.txt":
				fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
			case "/":
				fmt.Fprint(w, `<html><body><a href="/moved">a</a> <a href="/away">b</a> <a href="/flaky">c</a></body></html>`)
			case "/moved":
				http.Redirect(w, r, "/target", http.StatusMovedPermanently)
			case "/away":
				http.Redirect(w, r, other.URL+"/there", http.StatusFound)
			case "/post":
				http.Redirect(w, r, "/posted", http.StatusTemporaryRedirect)
			case "/flaky":
				failed := false
				flakyOnce.Do(func() { failed = true })
				if failed {
					http.Error(w, "try again", http.StatusInternalServerError)
					return
				}
				fmt.Fprint(w, "<html>ok now</html>")
			default:
				fmt.Fprint(w, "<html><body>page</body></html>")
			}
		})
		DeferCleanup(home.Close)
		DeferCleanup(other.Close)
		c = colly.NewCollector()
	})

	everyRequestIdentified := func(s *site) {
		hits := s.Hits()
		Expect(hits).NotTo(BeEmpty())
		for _, h := range hits {
			Expect(h.Header.Get("User-Agent")).To(Equal(exampleUA), "request for %s", h.Path)
			Expect(h.Header.Get("From")).To(Equal("bot@example.org"), "request for %s", h.Path)
			Expect(h.Header.Values("Cookie")).To(BeEmpty(), "request for %s", h.Path)
			Expect(h.Header.Get("X-Etiquette-Kind")).To(BeEmpty(), "request for %s", h.Path)
		}
	}

	Context("crawling a site with redirects, a retry, a POST and a clone", func() {
		It("sends the configured User-Agent and From on every request and every hop, and never a Cookie", func() {
			Expect(extensions.Polite(c, isolatedPolicy(home.budgetKey(), other.budgetKey()))).To(Succeed())
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

			Expect(home.Paths()).To(ContainElements("/robots.txt", "/", "/moved", "/target", "/away", "/flaky", "/post", "/posted", "/from-clone"))
			Expect(other.Paths()).To(ContainElements("/robots.txt", "/there"))
			Expect(retried).To(BeTrue())
			flakyHits := 0
			for _, p := range home.Paths() {
				if p == "/flaky" {
					flakyHits++
				}
			}
			Expect(flakyHits).To(Equal(2), "the retry reached the site")
			var posted hit
			for _, h := range home.Hits() {
				if h.Path == "/posted" {
					posted = h
				}
			}
			Expect(posted.Method).To(Equal(http.MethodPost), "a 307 keeps the method")
			everyRequestIdentified(home)
			everyRequestIdentified(other)
		})

		It("asks for robots.txt before any other request to an origin", func() {
			Expect(extensions.Polite(c, isolatedPolicy(home.budgetKey(), other.budgetKey()))).To(Succeed())
			Expect(c.Visit(home.URL + "/away")).To(Succeed())
			Expect(home.Paths()).To(HaveExactElements("/robots.txt", "/away"))
			Expect(other.Paths()).To(HaveExactElements("/robots.txt", "/there"))
		})

		It("does not fetch a page robots.txt disallows, and says which rule", func() {
			Expect(extensions.Polite(c, isolatedPolicy(home.budgetKey()))).To(Succeed())
			var got error
			c.OnError(func(_ *colly.Response, err error) { got = err })
			_ = c.Visit(home.URL + "/private/x")
			Expect(home.Paths()).NotTo(ContainElement("/private/x"))
			Expect(got).To(HaveOccurred())
		})
	})

	Context("when Polite is called again", func() {
		It("replaces the door, after an earlier success or an earlier refusal", func() {
			Expect(extensions.Polite(c, politeness.Policy{})).To(MatchError(identity.ErrNoIdentity))
			Expect(extensions.Polite(c, isolatedPolicy(home.budgetKey()))).To(Succeed())
			Expect(c.Visit(home.URL + "/first")).To(Succeed())
			p := isolatedPolicy(home.budgetKey())
			p.Identity.Version = "2.0"
			Expect(extensions.Polite(c, p)).To(Succeed())
			Expect(extensions.Status(c)).To(Succeed())
			Expect(c.Visit(home.URL + "/second")).To(Succeed())
			last := home.Hits()[len(home.Hits())-1]
			Expect(last.Path).To(Equal("/second"))
			Expect(last.Header.Get("User-Agent")).To(HavePrefix("ExampleBot/2.0 "))
		})

		It("keeps clones made before it working, with the new door", func() {
			Expect(extensions.Polite(c, isolatedPolicy(home.budgetKey()))).To(Succeed())
			clone := c.Clone()
			p := isolatedPolicy(home.budgetKey())
			p.Identity.Version = "3.0"
			Expect(extensions.Polite(c, p)).To(Succeed())
			Expect(clone.Visit(home.URL + "/from-old-clone")).To(Succeed())
			last := home.Hits()[len(home.Hits())-1]
			Expect(last.Path).To(Equal("/from-old-clone"))
			Expect(last.Header.Get("User-Agent")).To(HavePrefix("ExampleBot/3.0 "))
			Expect(extensions.Status(clone)).To(Succeed())
		})
	})

	Context("with extensions.Identify, the default policy", func() {
		It("identifies every request and caches on disk in the user cache directory", func() {
			cacheHome := GinkgoT().TempDir()
			GinkgoT().Setenv("XDG_CACHE_HOME", cacheHome)
			Expect(extensions.Identify(c, exampleBot())).To(Succeed())
			Expect(c.Visit(home.URL + "/identified")).To(Succeed())
			Expect(home.Paths()).To(HaveExactElements("/robots.txt", "/identified"))
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
			p := isolatedPolicy(home.budgetKey())
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
			Expect(extensions.Polite(c, isolatedPolicy(home.budgetKey()))).To(Succeed())
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
			Expect(home.Hits()).To(BeEmpty())
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
			Expect(home.Hits()).To(BeEmpty())
			Expect(home.Hits()).To(BeEmpty())
		})
	})

	Context("configured with a proxy through the policy", func() {
		It("identifies itself to the proxy too, on plain requests and on CONNECT", func() {
			proxy := newSite(func(w http.ResponseWriter, r *http.Request) {
				// Refuse everything: the spec only looks at what the proxy was sent.
				http.Error(w, "no", http.StatusForbidden)
			})
			DeferCleanup(proxy.Close)
			tlsSite := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
			DeferCleanup(tlsSite.Close)
			p := isolatedPolicy(home.budgetKey(), tlsSite.Listener.Addr().String())
			proxyURL, _ := url.Parse(proxy.URL)
			p.Proxy = http.ProxyURL(proxyURL)
			Expect(extensions.Polite(c, p)).To(Succeed())
			_ = c.Visit(home.URL + "/via-proxy")
			_ = c.Visit(tlsSite.URL + "/tunnelled")
			methods := map[string]bool{}
			for _, h := range proxy.Hits() {
				methods[h.Method] = true
				Expect(h.Header.Get("User-Agent")).To(Equal(exampleUA), "%s %s", h.Method, h.Path)
			}
			Expect(methods).To(HaveKey(http.MethodConnect))
			Expect(methods).To(HaveKey(http.MethodGet))
			Expect(home.Hits()).To(BeEmpty(), "everything went through the proxy")
		})

		It("identifies itself on CONNECT also when the base transport computes its own CONNECT headers", func() {
			proxy := newSite(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusForbidden) })
			DeferCleanup(proxy.Close)
			tlsSite := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
			DeferCleanup(tlsSite.Close)
			p := isolatedPolicy(tlsSite.Listener.Addr().String())
			proxyURL, _ := url.Parse(proxy.URL)
			p.Proxy = http.ProxyURL(proxyURL)
			p.BaseTransport = &http.Transport{GetProxyConnectHeader: func(context.Context, *url.URL, string) (http.Header, error) {
				return http.Header{"Proxy-Authorization": {"Basic dXNlcjpwYXNz"}}, nil
			}}
			Expect(extensions.Polite(c, p)).To(Succeed())
			_ = c.Visit(tlsSite.URL + "/tunnelled")
			Expect(proxy.Hits()).NotTo(BeEmpty())
			for _, h := range proxy.Hits() {
				Expect(h.Method).To(Equal(http.MethodConnect))
				Expect(h.Header.Get("User-Agent")).To(Equal(exampleUA))
				Expect(h.Header.Get("Proxy-Authorization")).NotTo(BeEmpty(), "the transport's own header is kept")
			}
		})
	})

	DescribeTable("a Colly setter that replaces or weakens the door after Polite",
		func(weaken func(c *colly.Collector, proxyURL string), what string) {
			// A proxy that would forward anything it got: the setters below point Colly at it.
			proxy := newSite(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "proxied") })
			DeferCleanup(proxy.Close)
			Expect(extensions.Polite(c, isolatedPolicy(home.budgetKey()))).To(Succeed())
			Expect(c.Visit(home.URL + "/before")).To(Succeed())
			Expect(extensions.Status(c)).To(Succeed())

			weaken(c, proxy.URL)
			clone := c.Clone()
			err := c.Visit(home.URL + "/after")
			Expect(err).To(MatchError(extensions.ErrDoorBypassed))
			Expect(err.Error()).To(ContainSubstring(what))
			Expect(clone.Visit(home.URL + "/clone-after")).To(MatchError(extensions.ErrDoorBypassed))
			Expect(extensions.Status(c)).To(MatchError(extensions.ErrDoorBypassed))
			Expect(home.Paths()).To(HaveExactElements("/robots.txt", "/before"), "nothing reached the site outside the door")
			Expect(proxy.Hits()).To(BeEmpty(), "nothing reached the proxy outside the door")
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
