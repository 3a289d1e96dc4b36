package etiquette_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/crawler"
	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/etiquettetest/matchers"
	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/politeness"
)

// frPages adds to site an origin that serves robots.txt (allow all) and an HTML page at every
// other path whose links are links[path]; a path not listed gets a page without links.
func frPages(site *etiquettetest.Site, links map[string][]string) *etiquettetest.Origin {
	o := site.NewOrigin().Robots(allowAll).Otherwise(etiquettetest.HTMLPage("a page"))
	for path, l := range links {
		o.Page(path, "page "+path, l...)
	}
	return o
}

// frCrawl runs crawler.Run through door and collects the results.
type frCrawl struct {
	mu      sync.Mutex
	results []crawler.Result
	summary crawler.Summary
	err     error
	took    time.Duration
}

func frRun(door *politeness.Door, cfg crawler.Config) *frCrawl {
	c := &frCrawl{}
	cfg.Client = door.Client()
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.Report = func(r crawler.Result) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.results = append(c.results, r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	started := time.Now()
	c.summary, c.err = crawler.Run(ctx, cfg)
	c.took = time.Since(started)
	return c
}

// fetchedPaths lists the paths of s that got a response.
func (c *frCrawl) fetchedPaths(s *etiquettetest.Origin) []string {
	var out []string
	for _, r := range c.results {
		if r.Status != 0 && strings.HasPrefix(r.URL, s.URL) {
			out = append(out, strings.TrimPrefix(r.URL, s.URL))
		}
	}
	return out
}

func (c *frCrawl) origin(key string) frontier.OriginStats {
	for _, o := range c.summary.Origins {
		if o.Origin == key {
			return o
		}
	}
	return frontier.OriginStats{}
}

var _ = Describe("a crawl of 100 origins of 7 pages each, with the default 16 workers", func() {
	It("finishes in under 8 seconds and starts at most 3 requests in any second at each origin", func() {
		pages := map[string][]string{"/": {"/1", "/2", "/3", "/4", "/5", "/6"}}
		for i := 1; i <= 6; i++ {
			pages[fmt.Sprint("/", i)] = []string{"/", fmt.Sprint("/", i%6+1)}
		}
		var starts []string
		site := newTestSite()
		sites := make([]*etiquettetest.Origin, 100)
		for i := range sites {
			sites[i] = frPages(site, pages)
			starts = append(starts, sites[i].URL+"/")
		}
		// The door's own hostclock.NewLocal clock: 3 starts per second and 2 in flight per origin.
		door, err := politeness.NewDoor(isolatedPolicy())
		Expect(err).NotTo(HaveOccurred())

		c := frRun(door, crawler.Config{Start: starts})

		Expect(c.err).NotTo(HaveOccurred())
		Expect(c.summary.Pages).To(Equal(700))
		Expect(c.summary.Failed).To(BeZero())
		Expect(c.took).To(BeNumerically("<", 8*time.Second))
		for _, s := range sites {
			Expect(s.Requests()).To(HaveLen(8), "robots.txt and 7 pages at %s", s.URL)
		}
		Expect(site).To(matchers.StartAtMostPerSecond(3), "the busiest second at each origin")
	})
})

var _ = Describe("a crawl limited by depth", func() {
	tree := map[string][]string{
		"/":     {"/d2-a", "/d2-b"},
		"/d2-a": {"/d3"},
		"/d3":   {"/d4"},
	}
	DescribeTable("fetches the start page at depth 1 and links one level deeper each time, up to the limit",
		func(maxDepth int, want []string) {
			s := frPages(newTestSite(), tree)
			door, err := politeness.NewDoor(isolatedPolicy(s.Addr()))
			Expect(err).NotTo(HaveOccurred())

			c := frRun(door, crawler.Config{Start: []string{s.URL + "/"}, MaxDepth: maxDepth})

			Expect(c.err).NotTo(HaveOccurred())
			Expect(c.fetchedPaths(s)).To(ConsistOf(want))
			Expect(etiquettetest.Paths(s.Requests())).To(ConsistOf(append([]string{"/robots.txt"}, want...)), "what the site received")
		},
		Entry("MaxDepth 1: only the start page", 1, []string{"/"}),
		Entry("MaxDepth 2: the start page and its links", 2, []string{"/", "/d2-a", "/d2-b"}),
		Entry("MaxDepth 0: no limit", 0, []string{"/", "/d2-a", "/d2-b", "/d3", "/d4"}),
	)
})

var _ = Describe("a page with more links than its origin's queue holds", func() {
	It("queues and fetches up to the limit and reports the rest as dropped for that origin", func() {
		var links []string
		for i := range 20 {
			links = append(links, fmt.Sprint("/p", i))
		}
		s := frPages(newTestSite(), map[string][]string{"/": links})
		door, err := politeness.NewDoor(isolatedPolicy(s.Addr()))
		Expect(err).NotTo(HaveOccurred())
		f, err := frontier.New(frontier.Options{MaxQueued: 5, Logger: slog.New(slog.DiscardHandler)})
		Expect(err).NotTo(HaveOccurred())

		// One worker: it reads the page to its end before anything is taken from the queue.
		c := frRun(door, crawler.Config{Start: []string{s.URL + "/"}, Frontier: f, Workers: 1})

		Expect(c.err).NotTo(HaveOccurred())
		Expect(c.fetchedPaths(s)).To(ConsistOf("/", "/p0", "/p1", "/p2", "/p3", "/p4"))
		Expect(s.Requests()).To(HaveLen(7), "robots.txt, the page and the 5 queued links")
		o := c.origin(s.Addr())
		Expect(o.Dropped).To(BeEquivalentTo(15))
		Expect(o.Done).To(BeEquivalentTo(6))
	})
})
