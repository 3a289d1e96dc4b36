package main

// This file decides how a crawl runs: the door the requests pass, the frontier that paces the
// origins, the crawler's workers over both, and how it stops on SIGINT.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/politecrawl/etiquette/crawler"
	"github.com/politecrawl/etiquette/discovery/links"
	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/events"
)

// drainTime is how long requests already on the wire may finish after SIGINT.
const drainTime = 3 * time.Second

// crawl runs the crawl from starts (absolute http(s) URLs), within their origins, and returns
// crawl's exit code.
func crawl(ctx context.Context, e env, o crawlOptions, policy politeness.Policy, starts []string) (int, error) {
	bus := &events.Bus{}
	policy.Events = bus
	out := newCrawlOutput(e, o.maxQueue)
	bus.Subscribe(out.event)
	door, err := politeness.NewDoor(policy)
	if err != nil {
		return exitUsage, err
	}
	f, err := frontier.New(frontier.Options{Pacer: policy.Clock, Concurrency: o.concurrency, MaxQueued: o.maxQueue})
	if err != nil {
		return exitUsage, err
	}
	// On SIGINT the crawler stops handing out URLs and gives requests on the wire drainTime;
	// door.Stop cancels at once every request still waiting for robots.txt, a start slot or a
	// Retry-After.
	stopDoor := context.AfterFunc(ctx, door.Stop)
	defer stopDoor()

	fmt.Fprintf(e.stderr, "etiquette: crawling %d start URL(s) as %q\n", len(starts), door.UserAgent())
	sum, err := crawler.Run(ctx, crawler.Config{
		Client:   door.Client(),
		Start:    starts,
		Frontier: f,
		Workers:  o.workers,
		MaxPages: o.maxPages,
		MaxDepth: o.maxDepth,
		// One page may fill its origin's queue, but no more: links beyond would only be dropped.
		Links:        links.Options{MaxLinks: o.maxQueue},
		Discovery:    o.discovery(),
		LastmodTrust: o.lastmodTrustOption(),
		Report:       out.result,
		Grace:        drainTime,
	})
	interrupted := ctx.Err() != nil
	out.summary(door.Stats(), sum, interrupted)
	switch {
	case interrupted:
		return exitInterrupted, nil
	case err != nil:
		return exitNo, err
	case sum.Pages == 0:
		return exitNo, errors.New("no page could be fetched; the lines on stdout say why")
	}
	return exitOK, nil
}
