package extensions_test

import (
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/extensions"
)

// The one page a UserTriggered collector fetches includes its redirect hops; a clone's Visit and a
// second Visit of the collector — sync or async — are refused before they reach the site.
func TestUserTriggeredFollowsHopsAndNothingElse(t *testing.T) {
	for _, async := range []bool{false, true} {
		site := etiquettetest.NewSite()
		origin := site.NewOrigin().Serve("/moved", etiquettetest.Redirect(http.StatusFound, "/page")).
			Otherwise(etiquettetest.HTMLPage("ok"))
		c := colly.NewCollector(colly.Async(async))
		if err := extensions.UserTriggered(c, fastPolicyAt(t, origin.Addr(), nil)); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var errs []error
		c.OnError(func(_ *colly.Response, err error) {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		})
		if err := c.Visit(origin.URL + "/moved"); err != nil {
			t.Fatal(err)
		}
		c.Wait()
		second := c.Visit(origin.URL + "/other")
		clone := c.Clone().Visit(origin.URL + "/from-a-clone")
		c.Wait()
		site.Close()

		mu.Lock()
		if want, paths := []string{"/robots.txt", "/moved", "/page"}, etiquettetest.Paths(site.Requests()); !slices.Equal(paths, want) {
			t.Errorf("async %v: the site saw %q, want %q", async, paths, want)
		}
		if !async {
			// A synchronous Visit returns the refusal; an async one reports it to OnError.
			for name, err := range map[string]error{"second Visit": second, "clone's Visit": clone} {
				if !errors.Is(err, extensions.ErrUserTriggeredFollow) {
					t.Errorf("%s: %v, want ErrUserTriggeredFollow", name, err)
				}
			}
		}
		// The clone has no callbacks (Colly's Clone copies none); the collector's own refusal is reported.
		if len(errs) != 1 || !errors.Is(errs[0], extensions.ErrUserTriggeredFollow) {
			t.Errorf("async %v: OnError saw %v, want one ErrUserTriggeredFollow", async, errs)
		}
		mu.Unlock()
	}
}

// Colly's CheckHead sends a HEAD before the page's GET, and its own robots.txt check (when a
// caller turns it back on) a GET of /robots.txt: both belong to fetching the one page.
func TestUserTriggeredLetsCollysOwnRequestsForThePageThrough(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	origin := site.NewOrigin().Otherwise(etiquettetest.HTMLPage("ok"))
	c := colly.NewCollector()
	if err := extensions.UserTriggered(c, fastPolicyAt(t, origin.Addr(), nil)); err != nil {
		t.Fatal(err)
	}
	c.CheckHead = true
	c.IgnoreRobotsTxt = false
	if err := c.Visit(origin.URL + "/page"); err != nil {
		t.Fatalf("Visit with CheckHead and Colly's robots.txt check: %v", err)
	}
	if err := c.Visit(origin.URL + "/robots.txt"); !errors.Is(err, extensions.ErrUserTriggeredFollow) {
		t.Errorf("a later Visit of /robots.txt: %v, want ErrUserTriggeredFollow", err)
	}
	var seen []string
	for _, r := range site.Requests() {
		seen = append(seen, r.Method+" "+r.Target)
	}
	if !slices.Contains(seen, "HEAD /page") || !slices.Contains(seen, "GET /page") {
		t.Errorf("the site saw %q; want the HEAD and the GET of /page", seen)
	}
}

// A Visit of /robots.txt does not open the way for a page elsewhere, nor for a second page.
func TestUserTriggeredRobotsTxtVisitIsNotAFreePass(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	a := site.NewOrigin().Otherwise(etiquettetest.HTMLPage("ok"))
	b := site.NewOrigin().Otherwise(etiquettetest.HTMLPage("ok"))
	c := colly.NewCollector()
	p := fastPolicyAt(t, a.Addr(), nil)
	p.Rate, p.AuthorizedRates = 0, nil
	if err := extensions.UserTriggered(c, p); err != nil {
		t.Fatal(err)
	}
	if err := c.Visit(a.URL + "/robots.txt"); err != nil {
		t.Fatal(err)
	}
	if err := c.Visit(b.URL + "/page"); !errors.Is(err, extensions.ErrUserTriggeredFollow) {
		t.Errorf("a page on another origin after a robots.txt Visit: %v, want ErrUserTriggeredFollow", err)
	}
	if err := c.Visit(a.URL + "/page"); err != nil {
		t.Errorf("the page on robots.txt's origin: %v", err)
	}
	if err := c.Visit(a.URL + "/second"); !errors.Is(err, extensions.ErrUserTriggeredFollow) {
		t.Errorf("a second page: %v, want ErrUserTriggeredFollow", err)
	}
}
