package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/etiquettetest/matchers"
	"github.com/politecrawl/etiquette/redisstore/redistest"
)

// TestTwoProcessesCrawlAsOne builds the example, starts a private Redis and runs two processes of
// one crawl against a recording site, and checks from what the site received that they crawled
// as one crawler: robots.txt and the sitemap read once, each page requested once, 3 starts per
// second and 2 in flight for the two together — and that both did part of the work. It does so
// on one Redis server and on a Redis Cluster of three masters.
func TestTwoProcessesCrawlAsOne(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example and crawls 20 pages in real time (about 7 s), twice")
	}
	bin := filepath.Join(t.TempDir(), "distributed")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Run("one server", func(t *testing.T) { twoProcessesCrawlAsOne(t, bin, redistest.Start(t).URL()) })
	t.Run("a cluster", func(t *testing.T) { twoProcessesCrawlAsOne(t, bin, redistest.StartCluster(t).URL()) })
}

func twoProcessesCrawlAsOne(t *testing.T, bin, redisURL string) {
	site := etiquettetest.NewSite()
	defer site.Close()
	shop := site.NewOrigin()
	var pages, listed []string
	for i := 1; i <= 20; i++ {
		pages = append(pages, fmt.Sprintf("/p/%d", i))
		if i > 10 {
			listed = append(listed, shop.URL+pages[i-1])
		}
	}
	shop.Robots("User-agent: *\nDisallow: /private\nSitemap: " + shop.URL + "/sitemap.xml\n")
	shop.Serve("/sitemap.xml", etiquettetest.Sitemap(listed...))
	shop.Serve("/", etiquettetest.HTMLPage("Shop", append(pages, "/private/stock")...).SetCookie(etiquettetest.SessionCookie()))
	for i, p := range pages {
		shop.Page(p, p, "/", pages[(i+1)%len(pages)])
	}

	// Two processes of one crawl, started together, both given the start URL.
	var procs []*exec.Cmd
	var outs []*bytes.Buffer
	for range 2 {
		cmd := exec.Command(bin, "-redis", redisURL, "-crawl", "example-test", shop.URL+"/")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs, outs = append(procs, cmd), append(outs, &stdout)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("process stderr:\n%s", stderr.String())
			}
		})
	}
	began := time.Now()
	for _, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("a process failed: %v", err)
		}
	}
	took := time.Since(began)

	g := NewWithT(t)
	g.Expect(site).To(matchers.IdentifyEveryRequestAs("ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org)", "bot@example.org"))
	g.Expect(site).To(matchers.FetchRobotsTxtFirst())
	g.Expect(site).To(matchers.NeverRequest("/private"))
	g.Expect(site).To(matchers.StartAtMostPerSecond(3))
	g.Expect(site).To(matchers.KeepAtMostInFlight(2))
	g.Expect(site).To(matchers.SendNoCookies())

	// Each URL once, robots.txt and the discovery documents included, though two processes crawled.
	paths := etiquettetest.Paths(site.Requests())
	want := append([]string{"/", "/robots.txt", "/sitemap.xml", "/llms.txt"}, pages...)
	g.Expect(slices.Sorted(slices.Values(paths))).To(Equal(slices.Sorted(slices.Values(want))), "each page, robots.txt and each discovery document once")

	// Each page was fetched by one process or the other, and both took part.
	var fetched [2][]string
	for i, out := range outs {
		for line := range strings.Lines(out.String()) {
			url, _, _ := strings.Cut(strings.TrimSpace(line), "\t")
			fetched[i] = append(fetched[i], strings.TrimPrefix(url, shop.URL))
		}
	}
	g.Expect(fetched[0]).NotTo(BeEmpty(), "the first process fetched nothing")
	g.Expect(fetched[1]).NotTo(BeEmpty(), "the second process fetched nothing")
	g.Expect(slices.Sorted(slices.Values(append(fetched[0], fetched[1]...)))).To(Equal(slices.Sorted(slices.Values(append([]string{"/"}, pages...)))))
	t.Logf("%d requests in %s (%.2f/s); the processes fetched %d and %d pages",
		len(paths), took.Round(time.Millisecond), float64(len(paths))/took.Seconds(), len(fetched[0]), len(fetched[1]))
}
