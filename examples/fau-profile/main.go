// Command fau-profile is a crawler that runs under an FAU crawler identity,
//
//	FAU-<ORG>-<BOT>/<VERSION> (+<INFO-URL>;mailto:<CONTACT>)
//
// the User-Agent the RRZE crawler rules of Friedrich-Alexander-Universität Erlangen-Nürnberg
// require. It checks the identity before anything else and refuses to start with a bad one,
// listing every problem with its fix; nothing is sent.
//
//	go run ./examples/fau-profile -ua 'FAU-RRZE-Legalcheck/1.0 (+https://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster@fau.de)' https://www.fau.de/
//
// The identity may also come from $ETIQUETTE_UA. It prints the title of every page it reaches on
// the start URL's host.
package main

import (
	"context"
	"errors"
	"flag"
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

// config is what the crawler is started with.
type config struct {
	UserAgent string // the whole FAU User-Agent
	Start     string // the start URL
}

func main() {
	ua := flag.String("ua", os.Getenv("ETIQUETTE_UA"), "the crawler's FAU `User-Agent` (default $ETIQUETTE_UA)")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: fau-profile -ua 'FAU-<ORG>-<BOT>/<VERSION> (+<INFO-URL>;mailto:<CONTACT>)' URL")
	}
	err := run(context.Background(), config{UserAgent: *ua, Start: flag.Arg(0)}, os.Stdout, os.Stderr)
	if errors.Is(err, identity.ErrInvalid) || errors.Is(err, identity.ErrNoIdentity) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2) // a configuration error: nothing was sent
	}
	if err != nil {
		log.Fatal(err)
	}
}

// run checks cfg.UserAgent against the FAU profile — and returns its problems without sending
// anything when it does not pass — then crawls from cfg.Start, writing one "URL\ttitle" line per
// page to out and the identity's warnings to errOut.
func run(ctx context.Context, cfg config, out, errOut io.Writer) error {
	// Start-up: the identity first. Parse reports every problem at once, each with its fix.
	id, warnings, err := identity.Parse(cfg.UserAgent, identity.FAU)
	if err != nil {
		return fmt.Errorf("fau-profile refuses to start: %w", err)
	}
	for _, w := range warnings {
		fmt.Fprintln(errOut, "identity warning:", w)
	}
	fmt.Fprintf(errOut, "crawling as %s (robots.txt token %s, From %s)\n", id.UserAgent(), id.CrawlToken(), id.From())

	start, err := url.Parse(cfg.Start)
	if err != nil || start.Hostname() == "" {
		return fmt.Errorf("%q is not an absolute URL", cfg.Start)
	}
	c := colly.NewCollector(colly.MaxDepth(2), colly.AllowedDomains(start.Hostname()), colly.StdlibContext(ctx))
	if err := extensions.Polite(c, politeness.Policy{Identity: id}); err != nil {
		return err
	}
	c.OnHTML("title", func(e *colly.HTMLElement) { fmt.Fprintf(out, "%s\t%s\n", e.Request.URL, e.Text) })
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
	c.OnError(func(r *colly.Response, err error) { fmt.Fprintf(errOut, "%s: %v\n", r.Request.URL, err) })
	if err := c.Visit(start.String()); err != nil {
		return err
	}
	c.Wait()
	return nil
}
