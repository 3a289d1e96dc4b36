package main

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/etiquettetest/isolated"
	"github.com/politecrawl/etiquette/etiquettetest/matchers"
)

// The scraper's specs: it crawls a recording test site once, and each It judges, from what the
// site received, one thing its operator expects. Copy this file and suite_test.go for your own
// scraper: make the site look like yours and call your scraper's entry point.
var _ = Describe("the polite scraper", Ordered, func() {
	var (
		site *etiquettetest.Site
		out  strings.Builder
		home string
	)

	BeforeAll(func(ctx context.Context) {
		// A home of the test's own, to show below that the crawl leaves the user's alone.
		home = GinkgoT().TempDir()
		GinkgoT().Setenv("HOME", home)
		GinkgoT().Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))

		site = etiquettetest.NewSite()
		DeferCleanup(site.Close)
		shop := site.NewOrigin().Robots("User-agent: *\nDisallow: /private\n")
		shop.Serve("/", etiquettetest.HTMLPage("Shop", "/a", "/b", "/private/c").SetCookie(etiquettetest.TrackingCookie()))
		shop.Page("/a", "Page A", "/b").Page("/b", "Page B", "/")
		shop.Nth("/a", 1, etiquettetest.Status(429).RetryAfter(time.Second))

		// isolated.Policy: the bot's identity with a host clock, robots.txt keeper and cache of the
		// test's own, so nothing reaches the next test or the user's cache directory.
		Expect(run(ctx, shop.URL+"/", &out, isolated.Policy(GinkgoT(), bot))).To(Succeed())
	}, NodeTimeout(time.Minute))

	It("identifies every request, with a way to reach its owner", func() {
		Expect(site).To(matchers.IdentifyEveryRequestAs("ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org)", "bot@example.org"))
	})
	It("reads robots.txt first and keeps out of what it disallows", func() {
		Expect(site).To(matchers.FetchRobotsTxtFirst())
		Expect(site).To(matchers.NeverRequest("/private"))
	})
	It("keeps to 3 request starts a second and 2 in flight", func() {
		Expect(site).To(matchers.StartAtMostPerSecond(3))
		Expect(site).To(matchers.KeepAtMostInFlight(2))
	})
	It("waits out a Retry-After, then gets the page", func() {
		Expect(site).To(matchers.WaitAfterRetryAfter())
		Expect(out.String()).To(ContainSubstring("Page A"), "the 429 was retried")
	})
	It("sends no cookies and probes no well-known paths", func() {
		Expect(site).To(matchers.SendNoCookies())
		Expect(site).To(matchers.ProbeNoWellKnown())
	})
	It("is built with a Colly version etiquette is tested with", func() {
		etiquettetest.CheckCollyVersion(GinkgoT()) // fails the spec, saying what is linked and what to do
	})
	It("writes nothing to the user's cache directory", func() {
		Expect(filepath.Join(home, ".cache", "etiquette")).NotTo(BeAnExistingFile())
	})
})
