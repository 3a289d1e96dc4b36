package main

// This file decides the demo command: it crawls the demo site on loopback, once or twice through
// one cache, with crawl's run loop, and prints what each pass did to each origin.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/politecrawl/etiquette/cmd/etiquette/demosite"
	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/report"
)

var demoDoc = commandDoc{
	name:  "demo",
	usage: "[--twice] [--report DIR] [-v]",
	about: `A guided demonstration of what etiquette does to a crawler's requests. Starts a demo site of
four origins on loopback ports (a blog, a shop, docs and an archive; nothing leaves the machine)
and crawls it as crawl would, as the demo identity ` + demosite.Token + `, at crawl's default rate
and concurrency, with a cache in memory. The site shows what the door answers to: robots.txt
groups and rules, a robots.txt answering 503, a 429 with Retry-After, a redirect, cookies the
crawl does not keep, sitemaps, a feed, llms.txt and a WordPress API.

Prints the report of the crawl on stdout: per origin the requests the site received, their pace
against the budget, the statuses, waits and pauses, robots.txt's decisions, the cache and the URLs
found by how they were found. The progress line and crawl's summary go to stderr. With --twice a
second crawl follows through the same cache, and its report shows the site answering 304 Not
Modified. The library's log shows warnings and errors only; -v shows all of it, debug records
included.`,
	exits: `  0    the demo ran
  1    the demo site could not start, or no page could be fetched
  2    usage, or a --report directory that cannot be created
  130  interrupted (SIGINT)`,
}

func runDemo(ctx context.Context, args []string, e env) (int, error) {
	fs := newFlagSet(demoDoc)
	twice := fs.Bool("twice", false, "crawl a second time through the same cache, and print that pass's report too")
	verbose := fs.Bool("v", false, "log every decision of the door, the host clock and the crawler on stderr (debug level); without it, warnings and errors only")
	reportDir := fs.String("report", "", "`DIR`: also write each pass's report as a directory: DIR/index.html and DIR/events.jsonl (with --twice: DIR/pass1 and DIR/pass2)")
	rest, err := parseFlags(fs, demoDoc, args, e)
	if err != nil {
		return exitUsage, err
	}
	if len(rest) > 0 {
		return exitUsage, demoDoc.argErrorf("takes no arguments, got %q", rest)
	}

	// An unusable report directory is a usage error found before the site starts, as crawl finds it.
	if *reportDir != "" {
		if err := os.MkdirAll(*reportDir, 0o755); err != nil {
			return exitUsage, usagef("--report %s: %v", *reportDir, err)
		}
	}
	site, err := demosite.Start()
	if err != nil {
		return exitNo, err
	}
	defer site.Close()
	passes := 1
	if *twice {
		passes = 2
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	return demoOn(ctx, e, site, passes, *reportDir, newCrawlLogAt(e.stderr, level))
}

// demoOn crawls site passes times through one cache and host clock, printing each pass's report
// on e.stdout and, with reportDir, writing it there (DIR/passN when passes > 1); the door, the
// host clock and the crawler log to log (above the progress line while it is drawn). The demo's
// specs run it on a site whose recording they read.
func demoOn(ctx context.Context, e env, site *demosite.Site, passes int, reportDir string, log *crawlLog) (int, error) {
	fmt.Fprintf(e.stderr, "etiquette: %s\n", demosite.IdentityNote)
	fmt.Fprintf(e.stderr, "etiquette: the demo site: blog %s, shop %s, docs %s, archive %s\n", site.Blog.URL, site.Shop.URL, site.Docs.URL, site.Archive.URL)

	// crawl's defaults, read from its own flags so the demo runs what 'etiquette crawl' would.
	var o crawlOptions
	o.register(flag.NewFlagSet("", flag.ContinueOnError))
	o.wantReport = true
	o.log = log
	logger := log.logger()
	policy, err := o.policyFor(site.Identity)
	if err != nil {
		return exitNo, err
	}
	// One policy for both passes: the same cache, and the same host clock, since the second pass
	// is the same process asking the same origins again. The clock is crawl's, made again to log
	// to the demo's logger.
	policy.CacheStore, policy.Logger = cache.NewMemoryStore(0), logger
	clock, err := hostclock.NewLocal(hostclock.Config{Rate: policy.Rate, Concurrency: policy.Concurrency,
		LatencyFactor: policy.LatencyFactor, Logger: logger})
	if err != nil {
		return exitNo, err
	}
	policy.Clock = clock
	// The report and the progress line name the origins after what they show, and the page
	// opens with what each of them does.
	o.reportNames = report.Options{Labels: site.Labels(), About: demosite.About}

	quiet := env{stdout: io.Discard, stderr: e.stderr, getenv: e.getenv}
	for pass := 1; pass <= passes; pass++ {
		o.reportDir = reportDir
		if o.reportDir != "" && passes > 1 {
			o.reportDir = filepath.Join(o.reportDir, fmt.Sprintf("pass%d", pass))
		}
		// A second pass starts at the rates the first left the origins at (a 429 halves one).
		o.reportNames.StartRates = map[string]float64{}
		for _, st := range clock.Stats() {
			o.reportNames.StartRates[st.Origin] = st.Rate
		}
		code, r, err := crawl(ctx, quiet, o, policy, site.StartURLs)
		if r != nil {
			if passes > 1 {
				fmt.Fprintf(e.stdout, "pass %d of %d\n", pass, passes)
			}
			if werr := showReport(e, e.stdout, r, o.reportDir); werr != nil && err == nil {
				code, err = exitNo, werr
			}
		}
		if code != exitOK || err != nil {
			return code, err
		}
	}
	return exitOK, nil
}
