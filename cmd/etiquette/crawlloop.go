package main

// This file decides how a crawl runs: the door the requests pass, the frontier that paces the
// origins, the crawler's workers over both, and how it stops on SIGINT.

import (
	"context"
	"fmt"
	"time"

	"github.com/politecrawl/etiquette/crawler"
	"github.com/politecrawl/etiquette/discovery/links"
	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/report"
)

// drainTime is how long requests already on the wire may finish after SIGINT.
const drainTime = 3 * time.Second

// crawl runs the crawl from starts (absolute http(s) URLs), within their origins, and returns
// crawl's exit code, with its report when o asks for one (--report DIR or o.wantReport; else nil).
// Both crawl and demo run it: policy.Events is replaced by the crawl's own bus.
func crawl(ctx context.Context, e env, o crawlOptions, policy politeness.Policy, starts []string) (int, *report.Report, error) {
	bus := &events.Bus{}
	policy.Events = bus
	if o.log == nil {
		o.log = newCrawlLog(e.stderr)
	}
	logger := o.log.logger()
	if policy.BaseTransport == nil {
		policy.BaseTransport = crawlTransport(o.workers, o.concurrency)
	}
	rep, err := newCrawlReport(o, policy)
	if err != nil {
		return exitUsage, nil, err
	}
	out := newCrawlOutput(e, o.maxQueue, rep.foundOrNil())
	bus.Subscribe(out.event)
	bus.Subscribe(rep.record)
	door, err := politeness.NewDoor(policy)
	if err != nil {
		return exitUsage, nil, err
	}
	defer o.closeShared()
	f, err := frontier.New(frontier.Options{Storage: o.storage(), Pacer: policy.Clock, Concurrency: o.concurrency, MaxQueued: o.maxQueue,
		Logger: logger})
	if err != nil {
		return exitNo, nil, withRedisHint(err)
	}
	// On SIGINT the crawler stops handing out URLs and gives requests on the wire drainTime;
	// door.Stop cancels at once every request still waiting for robots.txt, a start slot or a
	// Retry-After.
	stopDoor := context.AfterFunc(ctx, door.Stop)
	defer stopDoor()

	fmt.Fprintf(e.stderr, "etiquette: crawling %d start URL(s) as %q\n", len(starts), door.UserAgent())
	progress := startProgress(e, f, o.reportNames.Labels)
	bus.Subscribe(progress.Record)
	// While the line is drawn, a record is written above it, and the line drawn again below.
	restoreLog := o.log.through(progress)
	sum, err := crawler.Run(ctx, crawler.Config{
		Client:   door.Client(),
		Start:    starts,
		Frontier: f,
		Workers:  o.workers,
		MaxPages: o.maxPages,
		MaxDepth: o.maxDepth,
		// One page may fill its origin's queue, but no more: links beyond would only be dropped.
		Links:           links.Options{MaxLinks: o.maxQueue},
		Discovery:       o.discovery(),
		DiscoveryClaims: o.discoveryClaims(),
		LastmodTrust:    o.lastmodTrustOption(),
		Report:          out.result,
		Grace:           drainTime,
		Logger:          logger,
	})
	interrupted := ctx.Err() != nil
	progress.Close()
	restoreLog()
	out.summary(door.Stats(), sum, interrupted)
	r, repErr := rep.close()
	switch {
	case interrupted:
		return exitInterrupted, r, nil
	case err != nil:
		return exitNo, r, withRedisHint(err)
	case out.descriptorFailures() > 0:
		// Origins lost to this machine's limit are not the sites' answers: the crawl failed.
		return exitNo, r, fmt.Errorf("%d requests failed because the process ran out of file descriptors (EMFILE); "+
			"lower --workers or raise the limit (ulimit -n) and crawl again", out.descriptorFailures())
	case sum.Pages == 0:
		return exitNo, r, o.nothingFetched(sum)
	case repErr != nil:
		return exitNo, r, repErr
	}
	return exitOK, r, nil
}
