package plan_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/politecrawl/etiquette/discovery/feeds"
	"github.com/politecrawl/etiquette/discovery/llms"
	"github.com/politecrawl/etiquette/discovery/plan"
	"github.com/politecrawl/etiquette/discovery/sitemap"
	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/politeness"
)

// pages returns n URLs of the origin at base: base/p/0 … base/p/n-1.
func pages(base string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s/p/%d", base, i)
	}
	return out
}

// queuedVia counts the URLs a run queued found via via.
func (r *run) queuedVia(via string) int {
	n := 0
	for _, it := range r.items {
		if it.Via == via {
			n++
		}
	}
	return n
}

// feedSite is an origin whose start page advertises a feed of n items.
func feedSite(t *testing.T, n int) (*etiquettetest.Site, *etiquettetest.Origin) {
	site := etiquettetest.NewSite()
	t.Cleanup(site.Close)
	o := site.NewOrigin().Robots("User-agent: *\nAllow: /\n")
	o.Serve("/", etiquettetest.HTMLPage("Blog").Alternate("application/rss+xml", "/feed.xml"))
	o.Serve("/feed.xml", etiquettetest.RSS("Blog", pages(o.URL, n)...))
	return site, o
}

// A feed of 20,000 items is cut at the feed reader's 10,000 entries: those entries are queued
// (before, the cut threw them all away), and the cut is one limit of the origin.
func TestAFeedPastItsEntryCapKeepsTheEntriesBeforeTheCut(t *testing.T) {
	_, o := feedSite(t, 20_000)

	r := discover(t, testDoor(t, o), o.URL+"/", plan.Options{NoSitemapGuess: true}, nil)

	if n := r.queuedVia(frontier.ViaFeed); n != feeds.DefaultMaxEntries {
		t.Errorf("%d entries queued via the feed; want the %d before the cut", n, feeds.DefaultMaxEntries)
	}
	if n := limitOf(r.summary, o.URL, plan.ReasonFeedEntries); n != 1 {
		t.Errorf("feed-entries limit %d, want 1 (one feed cut); limits %+v", n, r.summary.Limits)
	}
	if d, ok := r.doc(o.URL + "/feed.xml"); !ok || !errors.Is(d.Err, feeds.ErrCut) {
		t.Errorf("the feed reported %+v; want its ErrCut", d)
	}
}

// With 50 pages left, a feed of 20,000 items is read no further than the pages left can use,
// and that is one limit of the origin.
func TestAFeedIsReadNoFurtherThanThePagesLeft(t *testing.T) {
	_, o := feedSite(t, 20_000)

	r := discover(t, testDoor(t, o), o.URL+"/", plan.Options{NoSitemapGuess: true}, func() int { return 50 })

	if n := r.queuedVia(frontier.ViaFeed); n < 1 || n > 50 {
		t.Errorf("%d entries queued via the feed for 50 pages left; want 1 to 50", n)
	}
	if n := limitOf(r.summary, o.URL, plan.ReasonPagesCovered); n != 1 {
		t.Errorf("pages-covered limit %d, want 1; limits %+v", n, r.summary.Limits)
	}
	if n := limitOf(r.summary, o.URL, plan.ReasonFeedEntries); n != 0 {
		t.Errorf("feed-entries limit %d: the page budget, not the feed's cap, stopped it; limits %+v", n, r.summary.Limits)
	}
}

// A sitemap of 50,001 URLs is cut at sitemaps.org's 50,000: those are queued, and the cut is
// one limit of the origin, not only an error in the document's report.
func TestASitemapPastItsURLCapKeepsTheURLsAndSaysSo(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin()
	o.Robots("User-agent: *\nAllow: /\nSitemap: " + o.URL + "/big.xml\n")
	o.Serve("/big.xml", etiquettetest.Sitemap(pages(o.URL, sitemap.DefaultMaxURLs+1)...))
	o.Page("/", "Home")

	r := discover(t, testDoor(t, o), o.URL+"/", plan.Options{}, nil)

	if n := r.queuedVia(frontier.ViaSitemap); n != sitemap.DefaultMaxURLs {
		t.Errorf("%d URLs queued via the sitemap; want the %d before the cut", n, sitemap.DefaultMaxURLs)
	}
	if n := limitOf(r.summary, o.URL, plan.ReasonSitemapEntries); n != 1 {
		t.Errorf("sitemap-entries limit %d, want 1 (one file cut); limits %+v", n, r.summary.Limits)
	}
	if d, ok := r.doc(o.URL + "/big.xml"); !ok || !errors.Is(d.Err, sitemap.ErrCut) {
		t.Errorf("the sitemap reported %+v; want its ErrCut", d)
	}
}

// An llms.txt just over the door's 10 MiB cap keeps the links before the cut, and the cut is a
// limit of the origin.
func TestAnLLMsTxtPastItsSizeCapKeepsTheLinksBeforeTheCut(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin().Robots("User-agent: *\nAllow: /\n").Page("/", "Home")
	var b strings.Builder
	b.WriteString("# Site\n\n## Docs\n")
	for _, p := range pages(o.URL, 100) {
		fmt.Fprintf(&b, "- [%s](%s)\n", p, p)
	}
	pad := strings.Repeat("Prose that lists nothing, to make the file long.\n", llms.MaxBytes/49+1)
	b.WriteString(pad)
	b.WriteString("- [Past the cut](/after-the-cut)\n")
	o.Serve("/llms.txt", etiquettetest.Text(b.String()))

	r := discover(t, testDoor(t, o), o.URL+"/", plan.Options{NoSitemapGuess: true}, nil)

	if n := r.queuedVia(frontier.ViaLLMs); n != 100 {
		t.Errorf("%d links queued via llms.txt; want the 100 before the cut", n)
	}
	if r.via(o.URL+"/after-the-cut") != "" {
		t.Error("a link past the cap was queued")
	}
	if n := limitOf(r.summary, o.URL, plan.ReasonDocumentSize); n != 1 {
		t.Errorf("document-size limit %d, want 1; limits %+v", n, r.summary.Limits)
	}
	if d, ok := r.doc(o.URL + "/llms.txt"); !ok || !errors.Is(d.Err, politeness.ErrBodyTooLarge) {
		t.Errorf("llms.txt reported %+v; want the door's body cap", d)
	}
}

// An llms.txt with more links than llms.MaxLinks keeps the first and counts the rest as one
// limit of the origin.
func TestAnLLMsTxtWithTooManyLinksCountsTheRest(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin().Robots("User-agent: *\nAllow: /\n").Page("/", "Home")
	o.Serve("/llms.txt", etiquettetest.LLMsTxt("Site", pages(o.URL, llms.MaxLinks+7)...))

	r := discover(t, testDoor(t, o), o.URL+"/", plan.Options{NoSitemapGuess: true}, nil)

	if n := r.queuedVia(frontier.ViaLLMs); n != llms.MaxLinks {
		t.Errorf("%d links queued via llms.txt; want the first %d", n, llms.MaxLinks)
	}
	if n := limitOf(r.summary, o.URL, plan.ReasonLLMsLinks); n != 7 {
		t.Errorf("llms-links limit %d, want the 7 links not kept; limits %+v", n, r.summary.Limits)
	}
}
