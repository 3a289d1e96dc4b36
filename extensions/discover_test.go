package extensions_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/etiquette/discovery/plan"
	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// discoverSite is a blog with a sitemap, llms.txt and a feed, and one page only its HTML links to.
func discoverSite(t *testing.T) (*etiquettetest.Site, *etiquettetest.Origin) {
	t.Helper()
	site := etiquettetest.NewSite()
	t.Cleanup(site.Close)
	o := site.NewOrigin()
	u := o.URL
	o.Robots("User-agent: *\nDisallow: /private\nSitemap: " + u + "/sitemap.xml\n")
	o.Serve("/sitemap.xml", etiquettetest.Sitemap(u+"/a", u+"/b", u+"/private"))
	o.Serve("/llms.txt", etiquettetest.LLMsTxt("Blog", u+"/docs"))
	o.Serve("/", etiquettetest.HTMLPage("Blog", "/linked", "/a").Alternate("application/rss+xml", "/feed"))
	o.Serve("/feed", etiquettetest.RSS("Blog", u+"/from-feed"))
	for _, p := range []string{"/a", "/b", "/docs", "/from-feed", "/linked", "/private", "/after"} {
		o.Page(p, p)
	}
	return site, o
}

func discoverPolicy(t *testing.T, o *etiquettetest.Origin) politeness.Policy {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	fast := map[string]float64{o.Addr(): 100}
	clock, err := hostclock.NewLocal(hostclock.Config{Authorized: fast, Concurrency: 4, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return politeness.Policy{
		Identity: identity.Identity{Profile: identity.Generic, Token: "ExampleBot", Version: "1.0", InfoURL: "https://example.org/bot", Contact: "bot@example.org"},
		Clock:    clock, Robots: robots.NewKeeper(robots.Options{}), Logger: quiet, NoCache: true,
		AuthorizedRates: fast, Rate: 100, Concurrency: 4,
	}
}

func TestDiscoverSeedsACollectorInDiscoveryOrder(t *testing.T) {
	for _, async := range []bool{false, true} {
		name := "synchronous"
		if async {
			name = "async"
		}
		t.Run(name, func(t *testing.T) {
			site, o := discoverSite(t)
			c := colly.NewCollector(colly.Async(async))
			if err := extensions.Polite(c, discoverPolicy(t, o)); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			via := map[string]string{}
			c.OnResponse(func(r *colly.Response) {
				mu.Lock()
				defer mu.Unlock()
				via[r.Request.URL.Path] = extensions.FoundVia(r.Request)
			})
			clone := c.Clone()
			c.OnHTML("a[href]", func(e *colly.HTMLElement) {
				// The scraper follows links as it always did.
				if strings.HasSuffix(e.Attr("href"), "linked") {
					_ = e.Request.Visit(e.Attr("href"))
				}
			})
			var docs []plan.Document
			f, err := frontier.New(frontier.Options{Rate: 100, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			sum, err := extensions.Discover(c, extensions.DiscoverOptions{Context: timeout(t), Frontier: f, Report: func(d plan.Document) {
				docs = append(docs, d)
			}}, o.URL+"/")
			if err != nil {
				t.Fatal(err)
			}
			// A clone made before Discover still sends through the door.
			if err := clone.Visit(o.URL + "/after"); err != nil {
				t.Fatal(err)
			}
			clone.Wait()

			paths := etiquettetest.Paths(site.Requests())
			at := func(p string) int {
				for i, q := range paths {
					if q == p {
						return i
					}
				}
				t.Fatalf("%s never requested: %v", p, paths)
				return -1
			}
			for _, before := range [][2]string{{"/robots.txt", "/sitemap.xml"}, {"/sitemap.xml", "/llms.txt"}, {"/llms.txt", "/"}, {"/", "/feed"},
				{"/feed", "/a"}, {"/feed", "/linked"}, {"/feed", "/docs"}, {"/feed", "/from-feed"}, {"/feed", "/b"}} {
				if at(before[0]) > at(before[1]) {
					t.Errorf("%s after %s: %v", before[0], before[1], paths)
				}
			}
			if len(paths) != 11 || paths[10] != "/after" {
				t.Errorf("requests %v; want robots.txt, sitemap, llms.txt, feed and 6 pages, each once, then the clone's", paths)
			}
			if err := etiquettetest.NeverRequest("/private").Check(site.Requests()); err != nil {
				t.Error(err)
			}
			if err := etiquettetest.IdentifyEveryRequestAs(politenessAgent(t, o), "bot@example.org").Check(site.Requests()); err != nil {
				t.Error(err)
			}
			want := map[string]string{"/": frontier.ViaStart, "/a": frontier.ViaSitemap, "/docs": frontier.ViaLLMs, "/from-feed": frontier.ViaFeed, "/linked": ""}
			for p, w := range want {
				if via[p] != w {
					t.Errorf("%s: FoundVia %q; want %q", p, via[p], w)
				}
			}
			if sum.Found[frontier.ViaSitemap] != 3 || len(docs) != 3 {
				t.Errorf("summary %+v and %d documents; want 3 sitemap URLs and 3 documents", sum, len(docs))
			}
		})
	}
}

func TestDiscoverNeedsPolite(t *testing.T) {
	if _, err := extensions.Discover(colly.NewCollector(), extensions.DiscoverOptions{}, "https://example.org/"); !errors.Is(err, extensions.ErrNotPolite) {
		t.Fatalf("Discover without Polite: %v; want ErrNotPolite", err)
	}
}

func timeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func politenessAgent(t *testing.T, o *etiquettetest.Origin) string {
	d, err := politeness.NewDoor(discoverPolicy(t, o))
	if err != nil {
		t.Fatal(err)
	}
	return d.UserAgent()
}
