package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/etiquettetest/isolated"
	"github.com/politecrawl/etiquette/etiquettetest/matchers"
)

// TestDiscoveryComesFirst crawls a recording site that publishes a sitemap index (with a gzipped
// sitemap), llms.txt and an RSS feed, and checks from what the site received that the crawl read
// them before any page, fetched each page once, and stayed polite. Copy it for your own crawler.
func TestDiscoveryComesFirst(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	blog := site.NewOrigin()
	u := blog.URL
	blog.Robots("User-agent: *\nDisallow: /private\nSitemap: " + u + "/sitemap_index.xml\n")
	blog.Serve("/sitemap_index.xml", etiquettetest.SitemapIndex(u+"/posts.xml.gz"))
	blog.Serve("/posts.xml.gz", etiquettetest.Sitemap(u+"/a", u+"/b", u+"/private/draft").Gzipped())
	blog.Serve("/llms.txt", etiquettetest.LLMsTxt("Blog", u+"/docs"))
	blog.Serve("/", etiquettetest.HTMLPage("Home", "/linked").Alternate("application/rss+xml", "/feed").
		SetCookie(etiquettetest.TrackingCookie()))
	blog.Serve("/feed", etiquettetest.RSS("Blog", u+"/from-feed"))
	blog.Page("/a", "Page A", "/b").Page("/b", "Page B").Page("/docs", "Docs")
	blog.Page("/from-feed", "From the feed").Page("/linked", "Only linked")

	var out strings.Builder
	// isolated.Policy: a clock, robots.txt keeper and cache of the test's own.
	if err := run(context.Background(), u+"/", &out, isolated.Policy(t, bot)); err != nil {
		t.Fatal(err)
	}

	g := NewWithT(t)
	g.Expect(site).To(matchers.IdentifyEveryRequestAs("ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org)", "bot@example.org"))
	g.Expect(site).To(matchers.FetchRobotsTxtFirst())
	g.Expect(site).To(matchers.NeverRequest("/private"))
	g.Expect(site).To(matchers.StartAtMostPerSecond(3))
	g.Expect(site).To(matchers.KeepAtMostInFlight(2))
	g.Expect(site).To(matchers.SendNoCookies())
	g.Expect(site).To(matchers.ProbeNoWellKnown())

	// Discovery order, as the site saw it: robots.txt, the sitemaps, llms.txt, the start page,
	// its feed, and the pages after all of them; each URL once.
	paths := etiquettetest.Paths(site.Requests())
	g.Expect(paths).To(HaveLen(11), "robots.txt, 2 sitemaps, llms.txt, the feed and 6 pages, each once: %v", paths)
	g.Expect(slices.Compact(slices.Sorted(slices.Values(paths)))).To(HaveLen(len(paths)), "a URL requested twice: %v", paths)
	order := []string{"/robots.txt", "/sitemap_index.xml", "/posts.xml.gz", "/llms.txt", "/", "/feed"}
	for i := 1; i < len(order); i++ {
		g.Expect(slices.Index(paths, order[i-1])).To(BeNumerically("<", slices.Index(paths, order[i])), "%s before %s: %v", order[i-1], order[i], paths)
	}
	for _, page := range []string{"/a", "/b", "/docs", "/from-feed", "/linked"} {
		g.Expect(slices.Index(paths, page)).To(BeNumerically(">", slices.Index(paths, "/feed")), "%s after the feed: %v", page, paths)
	}

	// How each page was found. (/b is listed by the sitemap and linked from /a: whichever comes
	// first fetches it, once.)
	g.Expect(out.String()).To(ContainSubstring("start\t" + u + "/\tHome"))
	g.Expect(out.String()).To(ContainSubstring("sitemap\t" + u + "/a\tPage A"))
	g.Expect(out.String()).To(ContainSubstring("llms\t" + u + "/docs\tDocs"))
	g.Expect(out.String()).To(ContainSubstring("feed\t" + u + "/from-feed\tFrom the feed"))
	g.Expect(out.String()).To(ContainSubstring("link\t" + u + "/linked\tOnly linked"))
	g.Expect(out.String()).To(ContainSubstring("found\tsitemap\t3"), "the sitemap's three URLs, the disallowed one included, were queued")
}
