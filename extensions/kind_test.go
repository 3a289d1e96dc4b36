package extensions_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// The mark of Kind reaches the door on the collector's requests and its clones', a clone marked
// otherwise leaves its parent alone, and a callback's own header wins.
func TestKindMarksACollectorAndItsClones(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(kind.Header) != "" {
			t.Errorf("%s: the private kind header reached the site", r.URL.Path)
		}
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	p := fastPolicy(t, srv, nil)
	var mu sync.Mutex
	got := map[string]kind.Kind{}
	accept := map[string]string{}
	p.Events = &events.Bus{}
	p.Events.Subscribe(func(e events.Event) {
		if e.Type == events.Response {
			mu.Lock()
			got[e.URL] = e.Kind
			mu.Unlock()
		}
	})
	c := colly.NewCollector(colly.Headers(map[string]string{"X-Scraper": "mine"}))
	if err := extensions.Polite(c, p); err != nil {
		t.Fatal(err)
	}
	extensions.Kind(c, kind.Sitemap)
	clone := c.Clone()
	feeds := c.Clone()
	extensions.Kind(feeds, kind.Feed)
	c.OnRequest(func(r *colly.Request) {
		if r.URL.Path == "/api" {
			r.Headers.Set(kind.Header, string(kind.API))
		}
	})
	c.OnResponse(func(r *colly.Response) {
		mu.Lock()
		accept[r.Request.URL.Path] = r.Request.Headers.Get("Accept")
		mu.Unlock()
	})
	for _, v := range []struct {
		c    *colly.Collector
		path string
	}{{c, "/sitemap.xml"}, {clone, "/from-clone.xml"}, {feeds, "/feed"}, {c, "/sitemap-2.xml"}, {c, "/api"}} {
		if err := v.c.Visit(srv.URL + v.path); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]kind.Kind{"/sitemap.xml": kind.Sitemap, "/from-clone.xml": kind.Sitemap, "/feed": kind.Feed,
		"/sitemap-2.xml": kind.Sitemap, "/api": kind.API, "/robots.txt": kind.Robots}
	for path, k := range want {
		if got[srv.URL+path] != k {
			t.Errorf("%s: kind %q, want %q", path, got[srv.URL+path], k)
		}
	}
	if a := accept["/sitemap.xml"]; a != kind.Sitemap.Accept() {
		t.Errorf("the sitemap asked for %q, want %q", a, kind.Sitemap.Accept())
	}
	if (*c.Headers).Get("X-Scraper") != "mine" {
		t.Error("Kind dropped the collector's own default headers")
	}
}
