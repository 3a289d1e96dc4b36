// Command polite-scraper is an ordinary Colly scraper made polite by one added line.
//
//	go run ./examples/polite-scraper https://example.org/
//
// It prints the title of every page it reaches on the start URL's host. Everything etiquette
// does — one identified User-Agent on every request, robots.txt first, at most 3 request starts
// per second per host, no cookies, a cache — comes from extensions.Polite.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/url"
	"os"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/identity"
)

// bot is who the scraper says it is, and how the site's operator reaches its owner. Change it to
// your own before crawling anything but your own site.
var bot = identity.Identity{
	Profile: identity.Generic, Token: "ExampleBot", Version: "1.0",
	InfoURL: "https://example.org/bot", Contact: "bot@example.org",
}

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: polite-scraper URL")
	}
	if err := run(context.Background(), os.Args[1], os.Stdout, politeness.Policy{Identity: bot}); err != nil {
		log.Fatal(err)
	}
}

// run crawls from startURL with the policy until ctx ends or the crawl is done, writing one
// "URL\ttitle" line per page to out. The policy comes from the caller so that the test can give
// the crawl a clock, robots.txt keeper and cache of its own (main_test.go).
func run(ctx context.Context, startURL string, out io.Writer, policy politeness.Policy) error {
	start, err := url.Parse(startURL)
	if err != nil || start.Hostname() == "" {
		return fmt.Errorf("%q is not an absolute URL", startURL)
	}
	c := colly.NewCollector(colly.MaxDepth(2), colly.AllowedDomains(start.Hostname()), colly.StdlibContext(ctx))

	// The one line: who we are (policy.Identity), and how the operator reaches us.
	if err := extensions.Polite(c, policy); err != nil {
		return err
	}

	c.OnHTML("title", func(e *colly.HTMLElement) { fmt.Fprintf(out, "%s\t%s\n", e.Request.URL, e.Text) })
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
	c.OnError(func(r *colly.Response, err error) { log.Printf("%s: %v", r.Request.URL, err) })
	if err := c.Visit(start.String()); err != nil {
		return err
	}
	c.Wait()
	return nil
}
