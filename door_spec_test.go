package etiquette_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/gocolly/colly/v2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/kind"
)

var _ = Describe("a site that redirects the crawler to another origin with a password in the URL", func() {
	It("sends no credentials there and prints the password nowhere", func() {
		other := newSite(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<html>there</html>") })
		DeferCleanup(other.Close)
		otherURL, _ := url.Parse(other.URL)
		home := newSite(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://mallory:s3cret@"+otherURL.Host+"/there", http.StatusFound)
		})
		DeferCleanup(home.Close)
		p := isolatedPolicy(home.budgetKey(), other.budgetKey())
		p.Events = &events.Bus{}
		var mu sync.Mutex
		var printed []string
		p.Events.Subscribe(func(e events.Event) {
			mu.Lock()
			printed = append(printed, e.URL, e.Detail)
			mu.Unlock()
		})
		c := colly.NewCollector()
		Expect(extensions.Polite(c, p)).To(Succeed())
		var final string
		c.OnResponse(func(r *colly.Response) { final = r.Request.URL.String() })
		Expect(c.Visit(home.URL + "/away")).To(Succeed())

		Expect(other.Paths()).To(ContainElement("/there"))
		for _, h := range other.Hits() {
			Expect(h.Header.Get("Authorization")).To(BeEmpty(), "request for %s", h.Path)
		}
		Expect(final).To(Equal(other.URL+"/there"), "the final URL a scraper reports")
		mu.Lock()
		defer mu.Unlock()
		Expect(strings.Join(printed, " ")).NotTo(ContainSubstring("s3cret"))
	})
})

var _ = Describe("a crawler asking for a sitemap and for a page", func() {
	It("asks for the media types each is published in, and keeps an Accept the scraper chose", func() {
		s := newSite(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
		DeferCleanup(s.Close)
		pages := colly.NewCollector()
		Expect(extensions.Polite(pages, isolatedPolicy(s.budgetKey()))).To(Succeed())
		sitemaps := pages.Clone()
		extensions.Kind(sitemaps, kind.Sitemap)
		api := pages.Clone()
		api.OnRequest(func(r *colly.Request) { r.Headers.Set("Accept", "application/ld+json") })
		Expect(pages.Visit(s.URL + "/page")).To(Succeed())
		Expect(sitemaps.Visit(s.URL + "/sitemap.xml")).To(Succeed())
		Expect(api.Visit(s.URL + "/data")).To(Succeed())
		accept := map[string]string{}
		for _, h := range s.Hits() {
			accept[h.Path] = h.Header.Get("Accept")
		}
		Expect(accept).To(HaveKeyWithValue("/robots.txt", "text/plain,*/*;q=0.1"))
		Expect(accept).To(HaveKeyWithValue("/page", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1"))
		Expect(accept).To(HaveKeyWithValue("/sitemap.xml", "application/xml,text/xml;q=0.9,application/gzip;q=0.8,text/plain;q=0.5,*/*;q=0.1"))
		Expect(accept).To(HaveKeyWithValue("/data", "application/ld+json"))
	})
})

var _ = Describe("a crawl that stays within one network", func() {
	It("follows a redirect from loopback to loopback (the private-network check is for hops from a public address)", func() {
		inner := newSite(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "inner") })
		DeferCleanup(inner.Close)
		outer := newSite(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, strings.Replace(inner.URL, "127.0.0.1", "localhost", 1)+"/target", http.StatusFound)
		})
		DeferCleanup(outer.Close)
		c := colly.NewCollector()
		Expect(extensions.Polite(c, isolatedPolicy(outer.budgetKey(), inner.budgetKey()))).To(Succeed())
		Expect(c.Visit(outer.URL + "/start")).To(Succeed())
		Expect(inner.Paths()).To(ContainElement("/target"))
	})
})
