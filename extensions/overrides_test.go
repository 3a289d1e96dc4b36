package extensions_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	collyext "github.com/gocolly/colly/v2/extensions"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/extensions"
)

// Colly settings the door must override are accepted, and what becomes of each is said once, in
// one Warn record at start (what a user sees with no logger configured), naming the Policy field
// to set instead. A collector as NewCollector makes it hears nothing.
func TestPoliteStatesItsOverridesOnceAtStart(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin().Serve("/a", etiquettetest.Text("a")).Serve("/b", etiquettetest.Text("b"))

	var quiet warnings
	p := fastPolicyAt(t, o.Addr(), nil)
	p.Logger = quiet.logger()
	if err := extensions.Polite(colly.NewCollector(), p); err != nil {
		t.Fatal(err)
	}
	if got := quiet.lines(); len(got) != 0 {
		t.Errorf("a plain collector: %q logged, want nothing", got)
	}

	var w warnings
	p.Logger = w.logger()
	c := colly.NewCollector(colly.Async(true), colly.UserAgent("MyScraper/2.0"))
	c.IgnoreRobotsTxt = false
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8, Delay: 10 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := extensions.Polite(c, p); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/a", "/b"} {
		if err := c.Visit(o.URL + path); err != nil {
			t.Fatal(err)
		}
	}
	c.Wait()
	lines := w.lines()
	t.Logf("%q", lines)
	if len(lines) != 1 {
		t.Fatalf("%d records, want one: %q", len(lines), lines)
	}
	for _, want := range []string{"level=WARN", "Async", "IgnoreRobotsTxt", "Parallelism 8", "Policy.Concurrency",
		"Delay 10ms", "Policy.Rate", "MyScraper/2.0", "ExampleBot/1.0", "Policy.Identity"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the start record lacks %q: %s", want, lines[0])
		}
	}
}

// A User-Agent the scraper sets on its requests — by a callback, by Colly's RandomUserAgent, by
// c.UserAgent after Polite — is replaced by the identity, and the door says so once, at the first
// such request, naming the identity sent instead. Colly's default User-Agent, which the scraper
// never chose, is replaced without a word, also on a clone made before Polite.
func TestPoliteSaysOnceWhenItReplacesTheScrapersUserAgent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(c *colly.Collector) *colly.Collector // returns the collector that visits
		warn  string                                    // "" means no warning
	}{
		{"default", func(c *colly.Collector) *colly.Collector { return c }, ""},
		{"clone made before Polite", nil, ""},
		{"callback", func(c *colly.Collector) *colly.Collector {
			c.OnRequest(func(r *colly.Request) { r.Headers.Set("User-Agent", "Mozilla/5.0 (X11) Firefox/120.0") })
			return c
		}, "Mozilla/5.0 (X11) Firefox/120.0"},
		{"RandomUserAgent", func(c *colly.Collector) *colly.Collector { collyext.RandomUserAgent(c); return c }, "Mozilla/5.0"},
		{"c.UserAgent after Polite", func(c *colly.Collector) *colly.Collector { c.UserAgent = "MyScraper/2.0"; return c }, "MyScraper/2.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := etiquettetest.NewSite()
			defer site.Close()
			o := site.NewOrigin().Serve("/a", etiquettetest.Text("a")).Serve("/b", etiquettetest.Text("b")).Serve("/c", etiquettetest.Text("c"))
			var w warnings
			p := fastPolicyAt(t, o.Addr(), nil)
			p.Logger = w.logger()
			c := colly.NewCollector()
			visitor := c
			if tc.setup == nil {
				visitor = c.Clone()
			}
			if err := extensions.Polite(c, p); err != nil {
				t.Fatal(err)
			}
			if tc.setup != nil {
				visitor = tc.setup(c)
			}
			for _, path := range []string{"/a", "/b", "/c"} {
				if err := visitor.Visit(o.URL + path); err != nil {
					t.Fatal(err)
				}
			}
			lines := w.lines()
			t.Logf("%q", lines)
			if tc.warn == "" {
				if len(lines) != 0 {
					t.Errorf("logged %q, want nothing", lines)
				}
				return
			}
			if len(lines) != 1 {
				t.Fatalf("%d records, want one: %q", len(lines), lines)
			}
			for _, want := range []string{"level=WARN", tc.warn, "ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org)"} {
				if !strings.Contains(lines[0], want) {
					t.Errorf("the record lacks %q: %s", want, lines[0])
				}
			}
			for _, r := range o.Requests() {
				if !strings.HasPrefix(r.Header.Get("User-Agent"), "ExampleBot/1.0") {
					t.Errorf("%s went out as %q", r.Path(), r.Header.Get("User-Agent"))
				}
			}
		})
	}
}
