package extensions_test

import (
	"fmt"
	"log/slog"
	"sort"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/identity"
)

// A crawl that reads what the site publishes for machines before its pages: robots.txt, the
// sitemap it names, then the start page and the pages found. FoundVia tells each page's callback
// where its URL came from.
func ExampleDiscover() {
	site := etiquettetest.NewSite()
	defer site.Close()
	blog := site.NewOrigin()
	blog.Robots("User-agent: *\nAllow: /\nSitemap: " + blog.URL + "/sitemap.xml\n")
	blog.Serve("/sitemap.xml", etiquettetest.Sitemap(blog.URL+"/2026/hello"))
	blog.Page("/", "Blog").Page("/2026/hello", "Hello")

	c := colly.NewCollector()
	err := extensions.Polite(c, politeness.Policy{
		Identity: identity.Identity{Profile: identity.Generic, Token: "ExampleBot", Version: "1.0",
			InfoURL: "https://example.org/bot", Contact: "bot@example.org"},
		NoCache: true, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	var found []string
	c.OnResponse(func(r *colly.Response) {
		found = append(found, r.Request.URL.Path+" via "+extensions.FoundVia(r.Request))
	})
	if _, err := extensions.Discover(c, extensions.DiscoverOptions{}, blog.URL+"/"); err != nil {
		fmt.Println(err)
	}
	sort.Strings(found)
	for _, f := range found {
		fmt.Println(f)
	}
	fmt.Println(etiquettetest.Paths(site.Requests())[:2])
	// Output:
	// / via start
	// /2026/hello via sitemap
	// [/robots.txt /sitemap.xml]
}

// A fetch of the one page a person asked for: it carries the user-triggered token, and a link a
// callback tries to follow is refused with ErrUserTriggeredFollow.
func ExampleUserTriggered() {
	site := etiquettetest.NewSite()
	defer site.Close()
	shop := site.NewOrigin().Page("/", "Shop", "/next").Page("/next", "Next")

	c := colly.NewCollector()
	err := extensions.UserTriggered(c, politeness.Policy{
		Identity: identity.Identity{Profile: identity.Generic, Token: "ExampleBot", Version: "1.0",
			InfoURL: "https://example.org/bot", Contact: "bot@example.org"},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		err := e.Request.Visit(e.Attr("href"))
		fmt.Println("following a link:", err != nil)
	})
	if err := c.Visit(shop.URL + "/"); err != nil {
		fmt.Println(err)
	}
	for _, r := range site.Requests() {
		fmt.Println(r.Target, r.Header.Get("User-Agent"))
	}
	// Output:
	// following a link: true
	// /robots.txt ExampleBot-User/1.0 (+https://example.org/bot; mailto:bot@example.org)
	// / ExampleBot-User/1.0 (+https://example.org/bot; mailto:bot@example.org)
}
