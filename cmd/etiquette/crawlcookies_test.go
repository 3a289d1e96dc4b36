package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/politecrawl/etiquette/etiquettetest"
)

// TestCrawlSummaryCountsEveryRefusedCookie: a site that sets a cookie on each of its N pages gets
// "cookies refused: N (analytics N)" in the summary — on the second crawl too, when every page is
// revalidated from the cache and the cookie comes on a 304.
func TestCrawlSummaryCountsEveryRefusedCookie(t *testing.T) {
	const leaves = 30
	site := etiquettetest.NewSite()
	t.Cleanup(site.Close)
	tracker := &http.Cookie{Name: "_ga", Value: "GA1.2.3", Path: "/"}
	var links []string
	for i := range leaves {
		links = append(links, fmt.Sprintf("/p%d", i))
	}
	o := site.NewOrigin().Robots("User-agent: *\nAllow: /\n").
		Otherwise(etiquettetest.HTMLPage("leaf").ETag(`"v1"`).Header("Cache-Control", "no-cache").SetCookie(tracker))
	o.Serve("/", etiquettetest.HTMLPage("home", links...).ETag(`"v1"`).Header("Cache-Control", "no-cache").SetCookie(tracker))
	args := append([]string{"crawl", "--cache-dir", t.TempDir(), "--no-discovery", "--authorized-rate", o.Addr() + "=50"}, identityArgs...)
	args = append(args, o.URL+"/")
	want := fmt.Sprintf("cookies refused: %d (analytics %d)", leaves+1, leaves+1)
	for pass := 1; pass <= 2; pass++ {
		code, _, errOut := runCLI(t, nil, args...)
		if code != exitOK {
			t.Fatalf("crawl %d: exit %d: %s", pass, code, errOut)
		}
		if !strings.Contains(errOut, want) {
			t.Errorf("crawl %d: the summary does not say %q:\n%s", pass, want, errOut)
		}
	}
}
