package etiquette_test

import (
	"context"
	"fmt"
	"log/slog"
	"mime"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/crawler"
	"github.com/politecrawl/etiquette/discovery/plan"
	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/etiquettetest/matchers"
	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// dsCrawl is one crawl with discovery through a door and what it reported.
type dsCrawl struct {
	mu      sync.Mutex
	results []crawler.Result
	summary crawler.Summary
	err     error
}

// dsRun crawls from starts with discovery on, through door, with a frontier as fast as the
// door's authorised rate so that the specs stay short.
func dsRun(door *politeness.Door, cfg crawler.Config, opts plan.Options) *dsCrawl {
	c := &dsCrawl{}
	f, err := frontier.New(frontier.Options{Rate: 50, Concurrency: 4, Logger: slog.New(slog.DiscardHandler)})
	Expect(err).NotTo(HaveOccurred())
	cfg.Client, cfg.Frontier, cfg.Discovery = door.Client(), f, &opts
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.Report = func(r crawler.Result) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.results = append(c.results, r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c.summary, c.err = crawler.Run(ctx, cfg)
	return c
}

// foundVia maps each reported URL's path on o to its found_via.
func (c *dsCrawl) foundVia(o *etiquettetest.Origin) map[string]string {
	out := map[string]string{}
	for _, r := range c.results {
		if p, ok := strings.CutPrefix(r.URL, o.URL); ok {
			out[p] = r.FoundVia
		}
	}
	return out
}

// dsKinds says what kind of document each path of a spec site is; pages are the rest.
func dsKind(path string) kind.Kind {
	switch {
	case path == "/robots.txt":
		return kind.Robots
	case strings.Contains(path, "sitemap"):
		return kind.Sitemap
	case strings.HasPrefix(path, "/llms"):
		return kind.LLMs
	case path == "/feed":
		return kind.Feed
	case strings.HasPrefix(path, "/wp-json/"), strings.HasPrefix(path, "/.well-known/api-catalog"):
		return kind.API
	}
	return kind.HTML
}

// acceptFits reports whether every media range of accept is one the kind asks for.
func acceptFits(accept string, k kind.Kind) bool {
	asked := map[string]bool{}
	for _, r := range strings.Split(k.Accept(), ",") {
		mt, _, _ := mime.ParseMediaType(r)
		asked[mt] = true
	}
	for _, r := range strings.Split(accept, ",") {
		if mt, _, err := mime.ParseMediaType(r); err != nil || !asked[mt] {
			return false
		}
	}
	return accept != ""
}

// firstAt returns the position of the first request for path in reqs, -1 when none.
func firstAt(reqs []etiquettetest.Request, path string) int {
	for i, r := range reqs {
		if r.Path() == path {
			return i
		}
	}
	return -1
}

var _ = Describe("a blog with robots.txt, a sitemap index of two sitemaps (one gzipped), llms.txt, an RSS feed and a WordPress API", func() {
	var (
		site *etiquettetest.Site
		blog *etiquettetest.Origin
		c    *dsCrawl
	)
	sitemaps := []string{"/sitemap_index.xml", "/post-sitemap.xml", "/page-sitemap.xml.gz"}
	documents := append(append([]string{}, sitemaps...), "/llms.txt", "/feed", "/wp-json/wp/v2/posts", "/wp-json/wp/v2/pages")
	pages := []string{"/2026/hello", "/2026/world", "/about", "/contact", "/docs/guide", "/2026/from-feed", "/2026/from-api", "/archive", "/2026/old"}

	BeforeEach(func() {
		site = etiquettetest.NewSite()
		DeferCleanup(site.Close)
		blog = site.NewOrigin()
		u := blog.URL
		blog.Robots("User-agent: *\nDisallow: /private/\nSitemap: " + u + "/sitemap_index.xml\n")
		blog.Serve("/sitemap_index.xml", etiquettetest.SitemapIndex(u+"/post-sitemap.xml", u+"/page-sitemap.xml.gz"))
		blog.Serve("/post-sitemap.xml", etiquettetest.Sitemap(u+"/2026/hello", u+"/2026/world", u+"/private/draft"))
		blog.Serve("/page-sitemap.xml.gz", etiquettetest.Sitemap(u+"/about", u+"/contact").Gzipped())
		blog.Serve("/llms.txt", etiquettetest.LLMsTxt("Blog", u+"/docs/guide", u+"/about"))
		blog.Serve("/", etiquettetest.HTMLPage("Blog", "/2026/hello", "/archive").
			Alternate("application/rss+xml", "/feed").
			Header("Link", "<"+u+"/wp-json/>; rel=\"https://api.w.org/\""))
		blog.Serve("/feed", etiquettetest.RSS("Blog", u+"/2026/from-feed", u+"/2026/hello"))
		blog.Serve("/wp-json/wp/v2/posts", etiquettetest.WordPressPosts(u+"/2026/from-api", u+"/2026/world"))
		for _, p := range pages {
			blog.Page(p, p)
		}
		blog.Page("/archive", "Archive", "/2026/old", "/2026/hello")
		blog.Page("/private/draft", "Draft")

		door, err := politeness.NewDoor(isolatedPolicy(blog.Addr()))
		Expect(err).NotTo(HaveOccurred())
		c = dsRun(door, crawler.Config{Start: []string{u + "/"}}, plan.Options{})
		Expect(c.err).NotTo(HaveOccurred())
	})

	It("reads robots.txt, then the sitemaps, then llms.txt, then the start page, then the feed and the API, and only then other pages", func() {
		reqs := site.Requests()
		Expect(reqs[0].Path()).To(Equal("/robots.txt"))
		order := []string{"/robots.txt", "/sitemap_index.xml", "/post-sitemap.xml", "/page-sitemap.xml.gz", "/llms.txt", "/"}
		for i := 1; i < len(order); i++ {
			Expect(firstAt(reqs, order[i-1])).To(BeNumerically("<", firstAt(reqs, order[i])),
				"%s before %s in %v", order[i-1], order[i], etiquettetest.Paths(reqs))
		}
		for _, advertised := range []string{"/feed", "/wp-json/wp/v2/posts"} {
			Expect(firstAt(reqs, advertised)).To(BeNumerically(">", firstAt(reqs, "/")), "%s after the start page in %v", advertised, etiquettetest.Paths(reqs))
		}
		lastDocument := 0
		for _, d := range documents {
			lastDocument = max(lastDocument, firstAt(reqs, d))
		}
		for _, p := range pages {
			Expect(firstAt(reqs, p)).To(BeNumerically(">", lastDocument), "%s after every discovery document in %v", p, etiquettetest.Paths(reqs))
		}
	})

	It("fetches every sitemap, feed and API URL once, and none robots.txt disallows", func() {
		for _, p := range pages {
			Expect(blog.Requests()).To(ContainElement(HaveField("Target", p)), p)
		}
		Expect(site).To(matchers.NeverRequest("/private/"))
		seen := map[string]int{}
		for _, r := range site.Requests() {
			seen[r.Target]++
		}
		for t, n := range seen {
			Expect(n).To(Equal(1), "requests for %s", t)
		}
		Expect(c.summary.Pages).To(Equal(len(pages) + 1))
		Expect(c.summary.Documents).To(Equal(len(documents)))
	})

	It("asks for each request's kind in Accept, identifies every request and probes nothing under /.well-known/", func() {
		for _, r := range site.Requests() {
			Expect(acceptFits(r.Header.Get("Accept"), dsKind(r.Path()))).To(BeTrue(), "Accept %q for %s", r.Header.Get("Accept"), r.Target)
		}
		Expect(site).To(matchers.IdentifyEveryRequestAs(exampleBot().UserAgent(), "bot@example.org"))
		Expect(site).To(matchers.FetchRobotsTxtFirst())
		Expect(site).To(matchers.ProbeNoWellKnown())
	})

	It("says how each URL was found and counts the URLs per source", func() {
		via := c.foundVia(blog)
		Expect(via).To(HaveKeyWithValue("/", frontier.ViaStart))
		Expect(via).To(HaveKeyWithValue("/sitemap_index.xml", frontier.ViaRobotsSitemap))
		Expect(via).To(HaveKeyWithValue("/post-sitemap.xml", frontier.ViaSitemapIndex))
		Expect(via).To(HaveKeyWithValue("/page-sitemap.xml.gz", frontier.ViaSitemapIndex))
		Expect(via).To(HaveKeyWithValue("/2026/hello", frontier.ViaSitemap))
		Expect(via).To(HaveKeyWithValue("/about", frontier.ViaSitemap), "listed by the sitemap before llms.txt")
		Expect(via).To(HaveKeyWithValue("/llms.txt", frontier.ViaConvention))
		Expect(via).To(HaveKeyWithValue("/docs/guide", frontier.ViaLLMs))
		Expect(via).To(HaveKeyWithValue("/feed", frontier.ViaAlternate))
		Expect(via).To(HaveKeyWithValue("/2026/from-feed", frontier.ViaFeed))
		Expect(via).To(HaveKeyWithValue("/2026/from-api", frontier.ViaWPRest))
		Expect(via).To(HaveKey(HavePrefix("/wp-json/wp/v2/posts")))
		for p, v := range via {
			if strings.HasPrefix(p, "/wp-json/") {
				Expect(v).To(Equal(frontier.ViaAPI), p)
			}
		}
		Expect(via).To(HaveKeyWithValue("/archive", frontier.ViaLink))
		Expect(via).To(HaveKeyWithValue("/2026/old", frontier.ViaLink))
		Expect(via).To(HaveKeyWithValue("/private/draft", frontier.ViaSitemap), "reported refused")
		Expect(c.summary.Sources).To(HaveKeyWithValue(frontier.ViaSitemap, 5))
		Expect(c.summary.Sources).To(HaveKeyWithValue(frontier.ViaLink, 2))
		Expect(c.summary.Discovery.Found).To(HaveKeyWithValue(frontier.ViaFeed, 1))
		Expect(c.summary.Discovery.Duplicates).To(HaveKeyWithValue(frontier.ViaFeed, 1), "/2026/hello was in the sitemap")
	})
})

var _ = Describe("a site without sitemaps or llms.txt", func() {
	var (
		site *etiquettetest.Site
		shop *etiquettetest.Origin
		door *politeness.Door
	)
	BeforeEach(func() {
		site = etiquettetest.NewSite()
		DeferCleanup(site.Close)
		shop = site.NewOrigin().Robots("User-agent: *\nAllow: /\n")
		shop.Page("/", "Shop", "/a", "/b").Page("/a", "A", "/c").Page("/b", "B").Page("/c", "C")
		var err error
		door, err = politeness.NewDoor(isolatedPolicy(shop.Addr()))
		Expect(err).NotTo(HaveOccurred())
	})

	It("is crawled through its HTML links, with /sitemap.xml and /llms.txt tried once each", func() {
		c := dsRun(door, crawler.Config{Start: []string{shop.URL + "/"}}, plan.Options{})

		Expect(c.err).NotTo(HaveOccurred())
		Expect(etiquettetest.Paths(site.Requests())).To(ConsistOf("/robots.txt", "/sitemap.xml", "/llms.txt", "/", "/a", "/b", "/c"))
		via := c.foundVia(shop)
		Expect(via).To(HaveKeyWithValue("/sitemap.xml", frontier.ViaConvention))
		Expect(via).To(HaveKeyWithValue("/llms.txt", frontier.ViaConvention))
		Expect(via).To(HaveKeyWithValue("/c", frontier.ViaLink))
		Expect(c.summary.Pages).To(Equal(4))
		Expect(site).To(matchers.ProbeNoWellKnown())
	})

	It("does not guess /sitemap.xml when told not to", func() {
		c := dsRun(door, crawler.Config{Start: []string{shop.URL + "/"}}, plan.Options{NoSitemapGuess: true})

		Expect(c.err).NotTo(HaveOccurred())
		Expect(site).To(matchers.NeverRequest("/sitemap.xml"))
		Expect(etiquettetest.Paths(site.Requests())).To(ContainElements("/llms.txt", "/c"))
	})
})

var _ = Describe("a crawl of 10 pages from a site whose sitemap index lists three sitemaps of 300 URLs", func() {
	It("reads the index and one sitemap, not the other two", func() {
		site := etiquettetest.NewSite()
		DeferCleanup(site.Close)
		big := site.NewOrigin()
		big.Robots("User-agent: *\nAllow: /\nSitemap: " + big.URL + "/index.xml\n")
		var files []string
		for f := range 3 {
			var urls []string
			for i := range 300 {
				urls = append(urls, fmt.Sprintf("%s/s%d/p%d", big.URL, f, i))
			}
			path := fmt.Sprintf("/sitemap-%d.xml", f)
			big.Serve(path, etiquettetest.Sitemap(urls...))
			files = append(files, big.URL+path)
		}
		big.Serve("/index.xml", etiquettetest.SitemapIndex(files...))
		big.Otherwise(etiquettetest.HTMLPage("a page"))
		door, err := politeness.NewDoor(isolatedPolicy(big.Addr()))
		Expect(err).NotTo(HaveOccurred())

		c := dsRun(door, crawler.Config{Start: []string{big.URL + "/"}, MaxPages: 10}, plan.Options{})

		Expect(c.err).NotTo(HaveOccurred())
		Expect(c.summary.Pages).To(Equal(10))
		Expect(site).To(matchers.NeverRequest("/sitemap-1.xml", "/sitemap-2.xml"))
		Expect(etiquettetest.Paths(site.Requests())).To(ContainElements("/index.xml", "/sitemap-0.xml"))
		Expect(c.summary.Discovery.SitemapsLeft).To(Equal(2))
	})
})

var _ = Describe("a sitemap on another origin, named by robots.txt (cross-submission)", func() {
	It("is fetched under its own origin's robots.txt and yields only the naming origin's pages", func() {
		site := etiquettetest.NewSite()
		DeferCleanup(site.Close)
		shop, cdn := site.NewOrigin(), site.NewOrigin()
		shop.Robots("User-agent: *\nAllow: /\nSitemap: " + cdn.URL + "/shop-sitemap.xml\n")
		shop.Page("/", "Shop").Page("/listed", "Listed")
		cdn.Robots("User-agent: *\nAllow: /\n")
		cdn.Serve("/shop-sitemap.xml", etiquettetest.Sitemap(shop.URL+"/listed", cdn.URL+"/cdn-page"))
		cdn.Page("/cdn-page", "not the shop's")
		door, err := politeness.NewDoor(isolatedPolicy(shop.Addr(), cdn.Addr()))
		Expect(err).NotTo(HaveOccurred())

		c := dsRun(door, crawler.Config{Start: []string{shop.URL + "/"}}, plan.Options{})

		Expect(c.err).NotTo(HaveOccurred())
		Expect(etiquettetest.Paths(cdn.Requests())).To(Equal([]string{"/robots.txt", "/shop-sitemap.xml"}))
		Expect(c.foundVia(shop)).To(HaveKeyWithValue("/listed", frontier.ViaSitemap))
		Expect(site).To(matchers.FetchRobotsTxtFirst())
	})
})

var _ = Describe("a start page that references an API catalog and a Markdown version of itself", func() {
	It("reads the catalog it was pointed to, queues the Markdown version, and leaves the oEmbed card alone", func() {
		site := etiquettetest.NewSite()
		DeferCleanup(site.Close)
		docs := site.NewOrigin().Robots("User-agent: *\nAllow: /\n")
		docs.Serve("/", etiquettetest.HTMLPage("Docs").
			Alternate("text/markdown", "/index.md").
			Alternate("application/json+oembed", "/oembed?url=/").
			Header("Link", "</.well-known/api-catalog>; rel=\"api-catalog\""))
		docs.Serve("/index.md", etiquettetest.Text("# Docs\n"))
		docs.Serve("/.well-known/api-catalog", etiquettetest.Text(`{"linkset":[{"anchor":"`+docs.URL+`/api/v1",`+
			`"service-doc":[{"href":"/api/v1/docs","type":"text/html"}]}]}`))
		docs.Page("/api/v1/docs", "API documentation")
		door, err := politeness.NewDoor(isolatedPolicy(docs.Addr()))
		Expect(err).NotTo(HaveOccurred())

		c := dsRun(door, crawler.Config{Start: []string{docs.URL + "/"}}, plan.Options{})

		Expect(c.err).NotTo(HaveOccurred())
		via := c.foundVia(docs)
		Expect(via).To(HaveKeyWithValue("/.well-known/api-catalog", frontier.ViaAPI))
		Expect(via).To(HaveKeyWithValue("/api/v1/docs", frontier.ViaAPICatalog))
		Expect(via).To(HaveKeyWithValue("/index.md", frontier.ViaAlternate))
		Expect(c.summary.Discovery.APIs).To(ConsistOf(docs.URL + "/api/v1"))
		Expect(site).To(matchers.NeverRequest("/oembed"))
		Expect(site).To(matchers.ProbeNoWellKnown())
	})
})

var _ = Describe("a second crawl of an unchanged site whose sitemap dates its pages, with the first crawl's cache", func() {
	It("sends no page request, and asks for robots.txt, the sitemap and llms.txt conditionally", func() {
		site := etiquettetest.NewSite()
		DeferCleanup(site.Close)
		docs := site.NewOrigin()
		u := docs.URL
		docs.Serve("/robots.txt", etiquettetest.Text("User-agent: *\nAllow: /\nSitemap: "+u+"/sitemap.xml\n").ETag("r1"))
		var entries strings.Builder
		for _, p := range []string{"/", "/a", "/b"} {
			fmt.Fprintf(&entries, "<url><loc>%s%s</loc><lastmod>2020-01-01</lastmod></url>", u, p)
		}
		docs.Serve("/sitemap.xml", etiquettetest.Text(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+
			entries.String()+`</urlset>`).ETag("s1"))
		docs.Serve("/llms.txt", etiquettetest.LLMsTxt("Docs", u+"/a").ETag("l1"))
		docs.Serve("/", etiquettetest.HTMLPage("Docs", "/a").ETag("home"))
		docs.Serve("/a", etiquettetest.HTMLPage("A", "/b").ETag("a"))
		docs.Serve("/b", etiquettetest.HTMLPage("B", "/").ETag("b"))
		store := cache.NewMemoryStore(0)
		crawlOnce := func(events *events.Bus) *dsCrawl {
			// A door of its own each time, as in a new process: only the cache is shared.
			p := isolatedPolicy(docs.Addr())
			p.NoCache, p.CacheStore, p.Events = false, store, events
			door, err := politeness.NewDoor(p)
			Expect(err).NotTo(HaveOccurred())
			return dsRun(door, crawler.Config{Start: []string{u + "/"}}, plan.Options{})
		}
		first := crawlOnce(nil)
		Expect(first.err).NotTo(HaveOccurred())
		Expect(first.summary.Pages).To(Equal(3))

		mark := site.Mark()
		bus := &events.Bus{}
		var mu sync.Mutex
		byLastmod := map[string]bool{}
		bus.Subscribe(func(e events.Event) {
			if e.Type == events.Response && e.Kind == kind.HTML {
				mu.Lock()
				defer mu.Unlock()
				byLastmod[strings.TrimPrefix(e.URL, u)] = e.Cache == cache.Fresh && e.Reason == cache.ReasonLastModified
			}
		})
		second := crawlOnce(bus)

		Expect(second.err).NotTo(HaveOccurred())
		Expect(second.summary.Pages).To(Equal(3), "every page reported, answered from the cache")
		again := site.Since(mark)
		Expect(etiquettetest.Paths(again)).To(ConsistOf("/robots.txt", "/sitemap.xml", "/llms.txt"))
		Expect(again).To(matchers.RevalidateWith304())
		mu.Lock()
		defer mu.Unlock()
		Expect(byLastmod).To(Equal(map[string]bool{"/": true, "/a": true, "/b": true}))
	})
})
