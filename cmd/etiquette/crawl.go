package main

// This file decides the crawl command: its help, what it needs before it starts (a policy and
// absolute start URLs), and its exit code.

import (
	"context"
	"net/url"

	"github.com/politecrawl/etiquette/politeness/origin"
)

var crawlDoc = commandDoc{
	name:  "crawl",
	usage: "IDENTITY-FLAGS [flags] URL...",
	about: `Crawls from the start URLs, politely: every request identified, robots.txt obeyed (RFC 9309), at
most --rate starts per second and --concurrency requests in flight per host, Retry-After and
backoff honoured, answers cached (RFC 9111), no cookies unless --cookies-for or --allow-cookie
declare a purpose. Links are followed within the start URLs' origins, except on nofollow pages
and links.

Prints one JSON object per line on stdout for every URL it decided about, robots.txt included,
  {"url","final_url","status","kind","found_via","cache","bytes","refused","reason"}
and a summary on stderr. On SIGINT it stops admitting requests, lets requests on the wire
finish for 3 seconds, prints the summary and exits 130.`,
	args: `  URL...  start URLs, absolute http(s)`,
	exits: `  0    at least one page got a response
  1    no page could be fetched (the lines on stdout say why)
  2    unusable input: usage, an invalid identity, rate or URL, an unsupported flag
  130  interrupted (SIGINT)`,
	identity: true,
}

func runCrawl(ctx context.Context, args []string, e env) (int, error) {
	var o crawlOptions
	fs := newFlagSet(crawlDoc)
	o.register(fs)
	starts, err := parseFlags(fs, crawlDoc, args, e)
	if err != nil {
		return exitUsage, err
	}
	if len(starts) == 0 {
		return exitUsage, crawlDoc.argErrorf("want at least one start URL")
	}
	policy, err := o.policy(e)
	if err != nil {
		return exitUsage, err
	}
	var startURLs []*url.URL
	scope := map[string]bool{}
	for _, s := range starts {
		u, err := httpURL("start URL", s)
		if err != nil {
			return exitUsage, err
		}
		k, _ := origin.RobotsKey(u)
		scope[k] = true
		startURLs = append(startURLs, u)
	}
	return crawl(ctx, e, o, policy, startURLs, scope)
}
