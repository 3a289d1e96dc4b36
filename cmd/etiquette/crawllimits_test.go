package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/politecrawl/etiquette/etiquettetest"
)

// TestCrawlReportsADiscoveryLimitOnce: a robots.txt naming sitemaps on 500 other origins has two
// of them read (the foreign-origin allowance); the other 498 are one JSON line, one summary line
// and one figure of the report for the origin, with their count — not a line per URL.
func TestCrawlReportsADiscoveryLimitOnce(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin()
	var robots strings.Builder
	robots.WriteString("User-agent: *\nAllow: /\n")
	for port := 1; port <= 500; port++ {
		// Other origins of loopback: nothing listens there, so the two read fail at once.
		fmt.Fprintf(&robots, "Sitemap: http://127.0.0.1:%d/sitemap.xml\n", port)
	}
	o.Robots(robots.String())
	o.Page("/", "Home")

	code, lines, errOut := crawlSite(t, o, "--report", t.TempDir())

	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var limit []line
	sitemapLines := 0
	for _, l := range lines {
		switch {
		case l.Refused == "limit":
			limit = append(limit, l)
		case l.Kind == "sitemap":
			sitemapLines++
		}
	}
	if len(limit) != 1 || limit[0].Limit != "foreign-sitemap-origins" || limit[0].Count != 498 || limit[0].URL != o.URL {
		t.Errorf("limit lines %+v; want one for %s, foreign-sitemap-origins, count 498", limit, o.URL)
	}
	if sitemapLines > 2 {
		t.Errorf("%d sitemap lines; want the 2 foreign sitemaps the allowance lets through at most", sitemapLines)
	}
	if want := "limit foreign-sitemap-origins on " + o.URL + ": 498 "; strings.Count(errOut, want) != 1 {
		t.Errorf("the summary does not say %q once:\n%s", want, errOut)
	}
	if !strings.Contains(errOut, "limits       foreign-sitemap-origins 498") {
		t.Errorf("the report does not count the limit for the origin:\n%s", errOut)
	}
}
