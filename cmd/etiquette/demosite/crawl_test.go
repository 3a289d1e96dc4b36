package demosite_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/crawler"
	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/robots"
	"github.com/politecrawl/etiquette/report"
)

// TestTwoPoliteCrawlsShowEveryBehaviour crawls the demo site twice through one door setup and
// cache, as `etiquette demo` does, and checks that the report shows what the demo promises. It
// takes about 12 s: the site's pauses and the budget are real time.
func TestTwoPoliteCrawlsShowEveryBehaviour(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls the demo site twice in real time (about 12 s)")
	}
	s := start(t)
	clock, err := hostclock.NewLocal(hostclock.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	keeper, store := robots.NewKeeper(robots.Options{}), cache.NewMemoryStore(0)
	crawl := func() *report.Report {
		bus := &events.Bus{}
		rec := report.NewRecorder(report.Options{})
		bus.Subscribe(rec.Record)
		door, err := politeness.NewDoor(politeness.Policy{Identity: s.Identity, Clock: clock, Robots: keeper,
			CacheStore: store, Events: bus, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		var found report.Found
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		began := time.Now()
		if _, err := crawler.Run(ctx, crawler.Config{Client: door.Client(), Start: s.StartURLs,
			Report: func(r crawler.Result) { found.Add(r.URL, r.FoundVia) }, Logger: slog.New(slog.DiscardHandler)}); err != nil {
			t.Fatal(err)
		}
		t.Logf("a crawl of the demo site took %s", time.Since(began).Round(time.Millisecond))
		return rec.Report(&found)
	}

	first := crawl()
	byOrigin := func(r *report.Report, o *etiquettetest.Origin) report.Origin {
		for _, f := range r.Origins {
			if f.Origin == o.Addr() {
				return f
			}
		}
		t.Fatalf("the report has no figures for %s", o.Addr())
		return report.Origin{}
	}
	blog, shop, archive := byOrigin(first, s.Blog), byOrigin(first, s.Shop), byOrigin(first, s.Archive)
	for _, o := range first.Origins {
		if float64(o.BusiestSecond) > o.Budget {
			t.Errorf("%s: %d starts in one second, over the budget of %g", o.Origin, o.BusiestSecond, o.Budget)
		}
	}
	if blog.Robots.Blocked < 2 || !strings.Contains(rules(blog), `"Disallow: /drafts/"`) {
		t.Errorf("blog: robots.txt blocked %d, by %s; want the demo bot's own Disallow: /drafts/", blog.Robots.Blocked, rules(blog))
	}
	if blog.CookiesRefused["analytics"] == 0 || blog.CookiesRefused["consent"] == 0 {
		t.Errorf("blog: cookies refused %v; want analytics and consent", blog.CookiesRefused)
	}
	if shop.Statuses[429] != 1 || shop.RetryAfter.Count < 1 || shop.RetryAfter.Honoured != shop.RetryAfter.Count {
		t.Errorf("shop: statuses %v, Retry-After %+v; want one 429 and its pause honoured", shop.Statuses, shop.RetryAfter)
	}
	if shop.Statuses[301] != 1 {
		t.Errorf("shop: statuses %v; want the redirect to the docs", shop.Statuses)
	}
	if archive.Robots.Status != 503 || archive.Robots.Allowed != 0 || archive.Robots.Blocked == 0 {
		t.Errorf("archive: robots.txt %+v; want 503 and every page blocked", archive.Robots)
	}

	second := crawl()
	for _, o := range []*etiquettetest.Origin{s.Blog, s.Shop, s.Docs} {
		if f := byOrigin(second, o); f.Cache["revalidated"] == 0 || f.BytesNotSent == 0 {
			t.Errorf("second crawl of %s: cache %v, %d bytes not sent; want 304s", o.Addr(), f.Cache, f.BytesNotSent)
		}
	}
	if n := byOrigin(second, s.Shop).Statuses[429]; n != 0 {
		t.Errorf("second crawl: %d answers 429 from the shop; the demo answers 429 once", n)
	}
}

func rules(o report.Origin) string {
	var b strings.Builder
	for _, r := range o.Robots.Rules {
		b.WriteString(r.Rule + "; ")
	}
	return b.String()
}
