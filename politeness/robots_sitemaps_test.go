package politeness

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"

	"github.com/politecrawl/etiquette/etiquettetest"
)

func TestSitemapsReadsTheRobotsTxtTheGateObeys(t *testing.T) {
	var mu sync.Mutex
	var got []string // paths and User-Agents, in order of arrival
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.Path+" "+r.Header.Get("User-Agent"))
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			w.Write([]byte("User-agent: *\nDisallow: /private\nSitemap: /sitemap.xml\nSitemap: https://cdn.example/s.xml.gz\nSitemap: /sitemap.xml\nSitemap: ftp://x.example/s.xml\n"))
			return
		}
		w.Write([]byte("<html></html>"))
	}))
	defer srv.Close()
	d := testDoor(t, srv, nil)
	u, _ := url.Parse(srv.URL + "/any/page")

	sm, err := d.Sitemaps(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{srv.URL + "/sitemap.xml", "https://cdn.example/s.xml.gz"}
	if !slices.Equal(sm, want) {
		t.Fatalf("Sitemaps = %q; want %q (resolved, http(s) only, de-duplicated)", sm, want)
	}
	// The page request that follows is decided by the same copy: robots.txt is not fetched again.
	resp, err := d.Client().Get(srv.URL + "/page")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	ua := d.UserAgent()
	if !slices.Equal(got, []string{"/robots.txt " + ua, "/page " + ua}) {
		t.Fatalf("the site saw %q; want one identified robots.txt fetch, then the page", got)
	}
}

func TestSitemapsRefusesAURLWithoutOrigin(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	d := testDoor(t, srv, nil)
	if _, err := d.Sitemaps(context.Background(), &url.URL{Path: "/relative"}); err == nil {
		t.Fatal("Sitemaps accepted a URL without an origin")
	}
}

// A stopped door sends nothing, robots.txt for a caller's Sitemap lines included.
func TestSitemapsAfterStopSendsNothing(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	origin := site.NewOrigin()
	d := testDoorAt(t, origin.Addr(), nil)
	d.Stop()
	u, _ := url.Parse(origin.URL + "/")
	if _, err := d.Sitemaps(context.Background(), u); !errors.Is(err, ErrStopped) {
		t.Errorf("Sitemaps after Stop: %v, want ErrStopped", err)
	}
	if got := etiquettetest.Paths(site.Requests()); len(got) != 0 {
		t.Errorf("a stopped door sent %q", got)
	}
}
