package main

// This file decides how a crawl runs: the Colly collector behind the door, which links it
// follows, and how it stops on SIGINT.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// drainTime is how long requests already on the wire may finish after SIGINT.
const drainTime = 3 * time.Second

// crawl runs the crawl from startURLs, following links within scope (robots keys of the start
// URLs' origins), and returns crawl's exit code.
func crawl(ctx context.Context, e env, o crawlOptions, policy politeness.Policy, startURLs []*url.URL, scope map[string]bool) (int, error) {
	bus := &events.Bus{}
	policy.Events = bus
	out := newCrawlOutput(e)
	bus.Subscribe(out.event)

	// The collector's context outlives an interrupt by drainTime, so that requests already on the
	// wire may finish; door.Stop cancels everything that still waits.
	crawlCtx, abort := context.WithCancel(context.WithoutCancel(ctx))
	defer abort()
	c := colly.NewCollector(colly.MaxDepth(o.maxDepth), colly.Async(true), colly.StdlibContext(crawlCtx))
	door, err := extensions.Install(c, policy)
	if err != nil {
		return exitUsage, err
	}
	// No Colly LimitRule: its parallelism is shared by every host a rule matches; the door's
	// host clock decides the pace per origin, and a request waiting for its turn holds no slot.

	var pagesMu sync.Mutex
	pages := 0
	c.OnRequest(func(r *colly.Request) {
		if o.maxPages > 0 {
			pagesMu.Lock()
			over := pages >= o.maxPages
			if !over {
				pages++
			}
			pagesMu.Unlock()
			if over {
				r.Abort()
				return
			}
		}
		if r.Ctx.Get("url") == "" {
			r.Ctx.Put("url", r.URL.String())
		}
	})
	c.OnResponse(func(r *colly.Response) {
		out.page(r.Request.Ctx.Get("url"), r.Request.URL.String(), r.StatusCode, r.Request.Ctx.Get("via"), int64(len(r.Body)))
	})
	c.OnError(func(r *colly.Response, err error) {
		orig := r.Request.Ctx.Get("url")
		if orig == "" {
			orig = r.Request.URL.String()
		}
		if r.StatusCode != 0 {
			out.page(orig, r.Request.URL.String(), r.StatusCode, r.Request.Ctx.Get("via"), int64(len(r.Body)))
			return
		}
		out.refused(orig, r.Request.Ctx.Get("via"), err)
	})
	nofollow := func(r *colly.Response) bool {
		return hasNofollow(r.Headers.Values("X-Robots-Tag"))
	}
	c.OnHTML(`meta[name="robots" i]`, func(el *colly.HTMLElement) {
		if hasNofollow([]string{el.Attr("content")}) {
			el.Request.Ctx.Put("nofollow", "1")
		}
	})
	c.OnHTML("a[href]", func(el *colly.HTMLElement) {
		if el.Request.Ctx.Get("nofollow") != "" || nofollow(el.Response) || strings.Contains(strings.ToLower(el.Attr("rel")), "nofollow") {
			return
		}
		u, err := url.Parse(el.Request.AbsoluteURL(el.Attr("href")))
		if err != nil {
			return
		}
		if k, err := origin.RobotsKey(u); err != nil || !scope[k] {
			return
		}
		u.Fragment = ""
		ctx := colly.NewContext()
		ctx.Put("via", "link")
		ctx.Put("url", u.String())
		_ = c.Request(http.MethodGet, u.String(), nil, ctx, nil)
	})

	fmt.Fprintf(e.stderr, "etiquette: crawling %d start URL(s) as %q\n", len(startURLs), door.UserAgent())
	for _, u := range startURLs {
		cctx := colly.NewContext()
		cctx.Put("via", "start")
		cctx.Put("url", u.String())
		if err := c.Request(http.MethodGet, u.String(), nil, cctx, nil); err != nil {
			out.refused(u.String(), "start", err)
		}
	}
	finished := make(chan struct{})
	go func() { c.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-ctx.Done():
		door.Stop()
		select {
		case <-finished:
		case <-time.After(drainTime):
			abort()
			<-finished
		}
	}
	out.summary(door.Stats(), ctx.Err() != nil)
	if ctx.Err() != nil {
		return exitInterrupted, nil
	}
	if out.pages() == 0 {
		return exitNo, errors.New("no page could be fetched; the lines on stdout say why")
	}
	return exitOK, nil
}

func hasNofollow(values []string) bool {
	for _, v := range values {
		for _, part := range strings.Split(strings.ToLower(v), ",") {
			part = strings.TrimSpace(part)
			// X-Robots-Tag may name a bot first ("otherbot: nofollow"); any nofollow is honoured.
			if part == "nofollow" || part == "none" || strings.HasSuffix(part, ": nofollow") || strings.HasSuffix(part, ":nofollow") {
				return true
			}
		}
	}
	return false
}
