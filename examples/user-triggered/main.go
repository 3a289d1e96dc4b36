// Command user-triggered fetches the one page a person asked for — the way an assistant or a
// reader app would — and prints its title and the links it offers, without following any.
//
//	go run ./examples/user-triggered https://example.org/article
//
// extensions.UserTriggered does the rest: the requests carry the user-triggered token
// (ExampleBot-User), robots.txt is decided by a group naming that token (a site that excluded
// crawlers has not excluded a person's reader), the wait for the site's turn is bounded, and
// nothing is kept once the program ends. What it fetches is for that person, now.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/identity"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: user-triggered URL")
	}
	if err := run(context.Background(), os.Args[1], os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run fetches pageURL for a person and writes its title and links to out. An error says why
// nothing was fetched: robots.txt blocks ExampleBot-User, the site asked for a longer wait than
// 10 s, or the page could not be fetched. main_test.go runs it against a recording test site.
func run(ctx context.Context, pageURL string, out io.Writer) error {
	c := colly.NewCollector(colly.StdlibContext(ctx))
	if err := extensions.UserTriggered(c, politeness.Policy{Identity: identity.Identity{
		Profile: identity.Generic, Token: "ExampleBot", Version: "1.0",
		InfoURL: "https://example.org/bot", Contact: "bot@example.org",
	}}); err != nil {
		return err
	}
	c.OnHTML("title", func(e *colly.HTMLElement) { fmt.Fprintf(out, "%s\n", strings.TrimSpace(e.Text)) })
	// The links are shown to the person, who may ask for one next; the collector follows none
	// (a c.Visit here would fail with extensions.ErrUserTriggeredFollow).
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { fmt.Fprintf(out, "  link: %s\n", e.Request.AbsoluteURL(e.Attr("href"))) })
	return c.Visit(pageURL)
}
