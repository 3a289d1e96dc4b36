package main

// This file decides the crawl command: its help, and what it needs before it starts (a policy,
// usable limits and absolute start URLs).

import "context"

var crawlDoc = commandDoc{
	name:  "crawl",
	usage: "IDENTITY-FLAGS [flags] URL...",
	about: `Crawls from the start URLs, politely, and stays on their origins (scheme, host and port): every
request identified, robots.txt obeyed (RFC 9309), at most --rate starts per second and
--concurrency requests in flight per host, Retry-After and backoff honoured, answers cached
(RFC 9111), no cookies unless --cookies-for or --allow-cookie declare a purpose, every request
signed with --sign-key if given. The links of HTML pages are followed, except on nofollow pages
and links.

A fixed number of workers (--workers) take URLs from one queue per origin (at most --max-queue
URLs each; more are dropped and counted in the summary): a worker is handed the next URL whose
origin may start now, so one slow origin never holds up the others. Start URLs are depth 1 and
the links on a depth-d page d+1.

Before any other page of an origin, it reads what the site publishes for machines (unless
--no-discovery): the sitemaps robots.txt names (else /sitemap.xml, unless --no-sitemap-guess),
/llms.txt (and /llms-full.txt when it is linked, or with --llms-full), then the start page, then
the feeds and APIs the start page advertises; the URLs they list are depth 1. Sitemap files are
read as the queue runs low. Discovery stays within the crawl's bounds: it requests only URLs on
the origin that named them or on a start origin (a robots.txt Sitemap line may name sitemaps on
up to 2 other origins), never a private address named by a public site; its requests count
against --workers; with --max-pages N it reads at most N documents, and no more for an origin
once the URLs queued for it cover the pages left. A page a sitemap, feed or API dates before its cached copy is
answered from the cache without asking the site while that copy is younger than
--lastmod-trust ("cache":"fresh","reason":"lastmod").

With --redis, every process given the same server and --redis-prefix crawls as one: the budget
per host counts all of their requests, robots.txt is fetched once, one of them reads each
origin's sitemaps, llms.txt, feeds and APIs (another takes over if it dies), a URL is queued once
and fetched by one of them (again by another only if the first died holding it), and the cache is
shared. Without Redis nothing is sent: a crawl waits --redis-wait for it, then exits 1.

Prints one JSON object per line on stdout for every URL it decided about, robots.txt, sitemaps,
llms.txt, feeds and API responses included,
  {"url","final_url","status","kind","found_via","cache","bytes","refused","reason"}
where found_via is start, robots, robots-sitemap, sitemap-index, convention, sitemap, llms,
alternate, feed, api, wp-rest, api-catalog or link, refused is "robots" (a rule of robots.txt), "budget" (the host was given up), "limit"
(see below) or "error" (robots.txt unreadable, a network error, interrupted), and a summary on
stderr. A limit that held URLs or documents back is one line per origin and limit, with url the
origin and how many: {"url","kind","refused":"limit","limit","count","reason"}, limit being
max-pages (not fetched: --max-pages reached), off-origin, foreign-sitemap-origins,
private-network, max-documents, pages-covered, listing-repeats, sitemap-repeated,
sitemap-too-deep or sitemap-files; the summary has a line for each. On SIGINT it stops admitting requests, lets requests on
the wire finish for 3 seconds, reports the URLs it did not fetch, prints the summary and exits 130.`,
	args: `  URL...  start URLs, absolute http(s)`,
	exits: `  0    at least one page got a response
  1    no page could be fetched (the lines on stdout say why)
  2    unusable input: usage, an invalid identity, rate, URL or signing key, an unsupported flag
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
	if err := o.checkRun(); err != nil {
		return exitUsage, err
	}
	o.log = newCrawlLog(e.stderr)
	policy, err := o.policy(e)
	if err != nil {
		return exitUsage, err
	}
	for _, s := range starts {
		if _, err := httpURL("start URL", s); err != nil {
			return exitUsage, err
		}
	}
	code, r, err := crawl(ctx, e, o, policy, starts)
	if r != nil {
		// The demo's per-origin report, on stderr: stdout holds the crawl's JSON lines.
		if werr := showReport(e, e.stderr, r, o.reportDir); werr != nil && err == nil {
			code, err = exitNo, werr
		}
	}
	return code, err
}
