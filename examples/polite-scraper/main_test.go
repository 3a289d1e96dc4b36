package main

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/etiquettetest/matchers"
)

// TestScraperIsPolite crawls a recording test site and checks, from what the site received,
// that the scraper behaves as its operator expects. Copy it for your own scraper.
func TestScraperIsPolite(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the crawl's default disk cache

	site := etiquettetest.NewSite()
	defer site.Close()
	shop := site.NewOrigin().Robots("User-agent: *\nDisallow: /private\n")
	shop.Serve("/", etiquettetest.HTMLPage("Shop", "/a", "/b", "/private/c").SetCookie(etiquettetest.TrackingCookie()))
	shop.Page("/a", "Page A", "/b").Page("/b", "Page B", "/")
	shop.Nth("/a", 1, etiquettetest.Status(429).RetryAfter(time.Second))

	var out strings.Builder
	if err := run(context.Background(), shop.URL+"/", &out); err != nil {
		t.Fatal(err)
	}

	g := NewWithT(t)
	g.Expect(site).To(matchers.IdentifyEveryRequestAs("ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org)", "bot@example.org"))
	g.Expect(site).To(matchers.FetchRobotsTxtFirst())
	g.Expect(site).To(matchers.NeverRequest("/private"))
	g.Expect(site).To(matchers.StartAtMostPerSecond(3))
	g.Expect(site).To(matchers.KeepAtMostInFlight(2))
	g.Expect(site).To(matchers.WaitAfterRetryAfter())
	g.Expect(site).To(matchers.SendNoCookies())
	g.Expect(site).To(matchers.ProbeNoWellKnown())
	g.Expect(out.String()).To(ContainSubstring("Page A"), "the 429 was retried")
}
