// Command sitemap-first crawls a site in the order its operator publishes it for machines:
// robots.txt, the sitemaps it names, llms.txt, the start page and the feeds it advertises, and
// only then the pages those list and the links on them.
//
//	go run ./examples/sitemap-first https://example.org/
//
// It prints one line per page: how its URL was found (sitemap, llms, feed, start, or link for a
// link a callback followed), the URL and the page's title. The crawl is the polite-scraper's
// collector with extensions.Discover in place of c.Visit.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"maps"
	"net/url"
	"os"
	"slices"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/identity"
)

// bot is who the crawler says it is; change it to your own.
var bot = identity.Identity{
	Profile: identity.Generic, Token: "ExampleBot", Version: "1.0",
	InfoURL: "https://example.org/bot", Contact: "bot@example.org",
}

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: sitemap-first URL")
	}
	if err := run(context.Background(), os.Args[1], os.Stdout, politeness.Policy{Identity: bot}); err != nil {
		log.Fatal(err)
	}
}

// run discovers and crawls startURL's site with the policy until ctx ends or nothing is left,
// writing one "via\tURL\ttitle" line per page to out, then one "found\tvia\tN" line per
// discovery source. The test passes a policy that shares nothing with other tests.
func run(ctx context.Context, startURL string, out io.Writer, policy politeness.Policy) error {
	start, err := url.Parse(startURL)
	if err != nil || start.Hostname() == "" {
		return fmt.Errorf("%q is not an absolute URL", startURL)
	}
	c := colly.NewCollector(colly.MaxDepth(2), colly.AllowedDomains(start.Hostname()), colly.StdlibContext(ctx))
	if err := extensions.Polite(c, policy); err != nil {
		return err
	}

	c.OnHTML("title", func(e *colly.HTMLElement) {
		via := extensions.FoundVia(e.Request)
		if via == "" {
			via = "link" // a link the callback below followed, not something discovery listed
		}
		fmt.Fprintf(out, "%s\t%s\t%s\n", via, e.Request.URL, e.Text)
	})
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
	c.OnError(func(r *colly.Response, err error) { log.Printf("%s: %v", r.Request.URL, err) })

	// In place of c.Visit: robots.txt's sitemaps, llms.txt, the start page, its feeds and APIs,
	// then what they list — each URL once, each request through the door Polite installed.
	sum, err := extensions.Discover(c, extensions.DiscoverOptions{Context: ctx}, start.String())
	if err != nil {
		return err
	}
	for _, via := range slices.Sorted(maps.Keys(sum.Found)) {
		fmt.Fprintf(out, "found\t%s\t%d\n", via, sum.Found[via])
	}
	return nil
}
