package etiquette_test

import (
	"net/http"
	"strings"
	"sync"

	"github.com/gocolly/colly/v2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/kind"
)

var _ = Describe("a site that redirects the crawler to another origin with a password in the URL", func() {
	It("sends no credentials there and prints the password nowhere", func() {
		site := newTestSite()
		other := site.NewOrigin().Otherwise(etiquettetest.HTMLPage("there"))
		home := site.NewOrigin().Otherwise(etiquettetest.Redirect(http.StatusFound, "http://mallory:s3cret@"+other.Addr()+"/there"))
		p := isolatedPolicy(home.Addr(), other.Addr())
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

		Expect(etiquettetest.Paths(other.Requests())).To(ContainElement("/there"))
		for _, r := range site.Requests() {
			Expect(r.Header.Values("Authorization")).To(BeEmpty(), "%s", r)
		}
		Expect(final).To(Equal(other.URL+"/there"), "the final URL a scraper reports")
		mu.Lock()
		defer mu.Unlock()
		Expect(strings.Join(printed, " ")).NotTo(ContainSubstring("s3cret"))
	})
})

var _ = Describe("a crawler asking for a sitemap and for a page", func() {
	It("asks for the media types each is published in, and keeps an Accept the scraper chose", func() {
		s := newTestSite().NewOrigin().Otherwise(etiquettetest.Text("ok"))
		pages := colly.NewCollector()
		Expect(extensions.Polite(pages, isolatedPolicy(s.Addr()))).To(Succeed())
		sitemaps := pages.Clone()
		extensions.Kind(sitemaps, kind.Sitemap)
		api := pages.Clone()
		api.OnRequest(func(r *colly.Request) { r.Headers.Set("Accept", "application/ld+json") })
		Expect(pages.Visit(s.URL + "/page")).To(Succeed())
		Expect(sitemaps.Visit(s.URL + "/sitemap.xml")).To(Succeed())
		Expect(api.Visit(s.URL + "/data")).To(Succeed())
		accept := map[string]string{}
		for _, r := range s.Requests() {
			accept[r.Target] = r.Header.Get("Accept")
		}
		Expect(accept).To(HaveKeyWithValue("/robots.txt", "text/plain,*/*;q=0.1"))
		Expect(accept).To(HaveKeyWithValue("/page", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1"))
		Expect(accept).To(HaveKeyWithValue("/sitemap.xml", "application/xml,text/xml;q=0.9,application/gzip;q=0.8,text/plain;q=0.5,*/*;q=0.1"))
		Expect(accept).To(HaveKeyWithValue("/data", "application/ld+json"))
	})
})

var _ = Describe("a crawl that stays within one network", func() {
	It("follows a redirect from loopback to loopback (the private-network check is for hops from a public address)", func() {
		site := newTestSite()
		inner := site.NewOrigin().Otherwise(etiquettetest.Text("inner"))
		outer := site.NewOrigin().Otherwise(etiquettetest.Redirect(http.StatusFound, strings.Replace(inner.URL, "127.0.0.1", "localhost", 1)+"/target"))
		c := colly.NewCollector()
		Expect(extensions.Polite(c, isolatedPolicy(outer.Addr(), inner.Addr()))).To(Succeed())
		Expect(c.Visit(outer.URL + "/start")).To(Succeed())
		Expect(etiquettetest.Paths(inner.Requests())).To(ContainElement("/target"))
	})
})
