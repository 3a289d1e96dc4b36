package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/cmd/etiquette/demosite"
	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/report"
)

// TestDemoEventStreamSpec runs the demo (one pass, --report DIR) on a demo site whose recording it
// keeps, reads the pass's events.jsonl, and holds the two against what the demo promises a site
// operator: a URL robots.txt blocks is never requested; the origin that answered 429 sees nothing
// until its Retry-After has passed; the origin whose robots.txt answers 503 receives nothing but
// requests for robots.txt; no request carries a Cookie header; every request carries one
// User-Agent, the demo identity's. It crawls in real time (about 7 s).
func TestDemoEventStreamSpec(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls the demo site in real time (about 7 s)")
	}
	t.Parallel()
	site, err := demosite.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	code, err := demoOn(context.Background(), env{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}, site, 1, dir, newCrawlLog(&errOut))
	if code != exitOK || err != nil {
		t.Fatalf("demo --report: exit %d, %v; stderr:\n%s", code, err, errOut.String())
	}
	evs := readEvents(t, filepath.Join(dir, report.EventsFile))
	reqs := site.Requests()
	t.Logf("%d events, %d requests received by the site", len(evs), len(reqs))

	received := map[string]bool{} // absolute URLs the site received
	for _, r := range reqs {
		received[r.Origin+r.Target] = true
	}

	t.Run("robots.txt-blocked URLs are never requested", func(t *testing.T) {
		blocked := map[string]int{} // origin → URLs refused by robots.txt
		for _, e := range evs {
			if e.Type != events.Refused || e.Reason != "robots" {
				continue
			}
			blocked[e.Origin]++
			if received[e.URL] {
				t.Errorf("%s was refused by robots.txt (%s) and still requested", e.URL, e.Detail)
			}
		}
		// The blog's own group (Disallow: /drafts/, /wp-admin/), the shop's /cart and /checkout,
		// and every URL of the archive, whose robots.txt cannot be read.
		for _, o := range []*etiquettetest.Origin{site.Blog, site.Shop, site.Archive} {
			if blocked[o.Addr()] == 0 {
				t.Errorf("no robots.txt refusal at %s in the event stream; the demo site has some there", o.Addr())
			}
		}
		etiquettetest.Verify(t, reqs, etiquettetest.NeverRequest("/drafts/", "/wp-admin/", "/cart", "/checkout"))
	})

	t.Run("the 429 origin is paused at least its Retry-After", func(t *testing.T) {
		shop := site.Shop.Requests()
		i := -1
		for j, r := range shop {
			if r.Status == 429 {
				i = j
				break
			}
		}
		if i < 0 || i == len(shop)-1 {
			t.Fatalf("the shop answered no 429, or received nothing after it: %v", etiquettetest.Paths(shop))
		}
		// The site's view: nothing arrived at the shop until ShopPause after it answered 429.
		answered, next := shop[i].Done, shop[i+1].At
		if gap := next.Sub(answered); gap < demosite.ShopPause {
			t.Errorf("the shop answered 429 (Retry-After %v) at %s and received %s %v later", demosite.ShopPause,
				answered.Format("15:04:05.000"), shop[i+1].Target, gap)
		} else {
			t.Logf("the shop answered 429 with Retry-After %v; its next request arrived %v later", demosite.ShopPause, gap.Round(time.Millisecond))
		}
		etiquettetest.Verify(t, shop, etiquettetest.WaitAfterRetryAfter())
		// The crawler's view: it paused the origin for the Retry-After, and no request of the
		// shop's got an answer from the site during the pause.
		var pause *events.Event
		for _, e := range evs {
			if e.Type == events.Paused && e.Origin == site.Shop.Addr() && e.Status == 429 && e.Reason == "retry-after" {
				pause = &e
				break
			}
		}
		if pause == nil {
			t.Fatalf("no paused event for the shop's 429 in %s", report.EventsFile)
		}
		if pause.Until.Sub(answered) < demosite.ShopPause {
			t.Errorf("paused until %s, less than Retry-After %v after the 429 was answered at %s",
				pause.Until.Format("15:04:05.000"), demosite.ShopPause, answered.Format("15:04:05.000"))
		}
		for _, e := range evs {
			if e.Type == events.Response && e.Origin == site.Shop.Addr() && e.Cache != "fresh" &&
				e.Time.After(pause.Time) && e.Time.Before(pause.Until) {
				t.Errorf("%s answered by the shop at %s, during the pause until %s", e.URL,
					e.Time.Format("15:04:05.000"), pause.Until.Format("15:04:05.000"))
			}
		}
	})

	t.Run("the origin whose robots.txt answers 503 gets nothing beyond robots.txt", func(t *testing.T) {
		archive := site.Archive.Requests()
		if len(archive) == 0 {
			t.Fatal("the archive received nothing, not even a request for robots.txt")
		}
		for _, r := range archive {
			if r.Path() != "/robots.txt" {
				t.Errorf("the archive, whose robots.txt answers 503, received %s", r)
			}
		}
		for _, e := range evs {
			if e.Type == events.Response && e.Origin == site.Archive.Addr() && e.Kind != "robots" {
				t.Errorf("the event stream shows a response from the archive for %s", e.URL)
			}
		}
		t.Logf("the archive received %d requests for robots.txt (the first and the backoff's retries)", len(archive))
	})

	t.Run("no Cookie header", func(t *testing.T) {
		refused := 0
		for _, e := range evs {
			if e.Type == events.Notice && e.Reason == "cookie-refused" {
				refused++
			}
		}
		if refused == 0 {
			t.Errorf("no cookie-refused notice: the demo site sets cookies on the blog and the shop")
		}
		etiquettetest.Verify(t, reqs, etiquettetest.SendNoCookies())
	})

	t.Run("one User-Agent", func(t *testing.T) {
		agents := map[string]int{}
		for _, r := range reqs {
			agents[r.Header.Get("User-Agent")]++
		}
		if len(agents) != 1 {
			t.Errorf("the site received %d User-Agents: %v", len(agents), agents)
		}
		etiquettetest.Verify(t, reqs, etiquettetest.IdentifyEveryRequestAs(site.Identity.UserAgent(), site.Identity.From()))
	})
}
