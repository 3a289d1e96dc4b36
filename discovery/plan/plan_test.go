package plan_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/discovery/links"
	"github.com/politecrawl/etiquette/discovery/llms"
	"github.com/politecrawl/etiquette/discovery/plan"
	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// testDoor is a door of its own, authorised to go fast against the site's origins.
func testDoor(t testing.TB, origins ...*etiquettetest.Origin) *politeness.Door {
	t.Helper()
	fast := map[string]float64{}
	for _, o := range origins {
		fast[o.Addr()] = 100
	}
	clock, err := hostclock.NewLocal(hostclock.Config{Authorized: fast, Concurrency: 4, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	d, err := politeness.NewDoor(politeness.Policy{
		Identity: identity.Identity{Profile: identity.Generic, Token: "ExampleBot", Version: "1.0", InfoURL: "https://example.org/bot"},
		Clock:    clock, Robots: robots.NewKeeper(robots.Options{}), NoCache: true, Logger: slog.New(slog.DiscardHandler),
		AuthorizedRates: fast, Rate: 100, Concurrency: 4,
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// run is one discovery, driven by a single worker that fetches start pages only: every other
// URL the frontier hands out is recorded, not fetched, so the site's log holds discovery alone.
type run struct {
	items   []frontier.Item
	docs    []plan.Document
	summary plan.Summary
}

func (r *run) via(url string) string {
	for _, it := range r.items {
		if it.URL == url {
			return it.Via
		}
	}
	return ""
}

func (r *run) doc(url string) (plan.Document, bool) {
	for _, d := range r.docs {
		if d.URL == url {
			return d, true
		}
	}
	return plan.Document{}, false
}

func discover(t testing.TB, door *politeness.Door, start string, opts plan.Options, pagesLeft func() int) *run {
	t.Helper()
	return discoverWith(t, door, start, plan.Config{Options: opts, PagesLeft: pagesLeft})
}

// discoverWith is discover with cfg's Options, PagesLeft, MaxDocuments and InFlight.
func discoverWith(t testing.TB, door *politeness.Door, start string, cfg plan.Config) *run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The driver fetches no page but the start page, so the frontier need not space them.
	f, err := frontier.New(frontier.Options{Pacer: anyTime{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	r := &run{}
	var mu sync.Mutex
	client := door.Client()
	cfg.Client, cfg.Frontier, cfg.Logger = client, f, slog.New(slog.DiscardHandler)
	cfg.Report = func(d plan.Document) {
		mu.Lock()
		defer mu.Unlock()
		r.docs = append(r.docs, d)
	}
	p, err := plan.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if errs := p.Begin(ctx, []string{start}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	for {
		it, err := f.Next(ctx)
		if errors.Is(err, frontier.ErrExhausted) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		r.items = append(r.items, it)
		if it.Via == frontier.ViaStart {
			p.StartRead(it, readPage(t, client, it.URL))
		}
		if err := f.Ack(it, nil); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	p.Wait()
	r.summary = p.Summary()
	mu.Lock()
	defer mu.Unlock()
	return r
}

// anyTime is a frontier.Pacer that lets every origin start at once.
type anyTime struct{}

func (anyTime) Earliest(string) (time.Time, error) { return time.Time{}, nil }

func readPage(t testing.TB, client *http.Client, url string) *plan.Page {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	s, _ := links.Extract(resp.Body, resp.Request.URL, links.Options{}, nil)
	return &plan.Page{URL: resp.Request.URL, Header: resp.Header, Head: s.Head}
}

func TestLLMsTxt(t *testing.T) {
	tests := []struct {
		name      string
		serve     map[string]etiquettetest.Answer
		opts      plan.Options
		pagesLeft int // -1: no limit
		wantVia   map[string]string
		wantErr   map[string]error // document path → error its report wraps
		never     []string
		skipped   int
	}{
		{name: "a 404 is normal", wantErr: map[string]error{"/llms.txt": nil}, never: []string{"/llms-full.txt"}, pagesLeft: -1},
		{name: "a soft 404 is not an llms.txt",
			serve:     map[string]etiquettetest.Answer{"/llms.txt": etiquettetest.HTMLPage("Not found", "/trap")},
			wantErr:   map[string]error{"/llms.txt": llms.ErrNotLLMs},
			wantVia:   map[string]string{"/trap": ""},
			pagesLeft: -1},
		{name: "links, Optional last, llms-full.txt when linked",
			serve: map[string]etiquettetest.Answer{
				"/llms.txt":      etiquettetest.Text("# Site\n\n## Docs\n- [A](/a)\n- [Full](/llms-full.txt)\n\n## Optional\n- [O](/o)\n"),
				"/llms-full.txt": etiquettetest.Text("# Site, in full\n\n- [B](/b)\n"),
			},
			wantVia:   map[string]string{"/a": frontier.ViaLLMs, "/o": frontier.ViaLLMs, "/b": frontier.ViaLLMs},
			wantErr:   map[string]error{"/llms-full.txt": nil},
			pagesLeft: -1},
		{name: "Optional skipped when the page budget is spoken for",
			serve:     map[string]etiquettetest.Answer{"/llms.txt": etiquettetest.Text("# Site\n- [A](/a)\n- [B](/b)\n## Optional\n- [O](/o)\n- [P](/p)\n")},
			wantVia:   map[string]string{"/a": frontier.ViaLLMs, "/o": ""},
			pagesLeft: 2, skipped: 2},
		{name: "llms-full.txt by option",
			serve:     map[string]etiquettetest.Answer{"/llms-full.txt": etiquettetest.Text("# Full\n- [B](/b)\n")},
			opts:      plan.Options{LLMsFull: true},
			wantVia:   map[string]string{"/b": frontier.ViaLLMs},
			pagesLeft: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site := etiquettetest.NewSite()
			defer site.Close()
			o := site.NewOrigin().Robots("User-agent: *\nAllow: /\n").Page("/", "Home")
			for path, a := range tt.serve {
				o.Serve(path, a)
			}
			r := discover(t, testDoor(t, o), o.URL+"/", tt.opts, func() int { return tt.pagesLeft })
			for path, want := range tt.wantVia {
				if got := r.via(o.URL + path); got != want {
					t.Errorf("%s queued via %q; want %q", path, got, want)
				}
			}
			for path, want := range tt.wantErr {
				d, ok := r.doc(o.URL + path)
				if !ok {
					t.Errorf("%s was not requested", path)
					continue
				}
				if (want == nil && d.Err != nil) || (want != nil && !errors.Is(d.Err, want)) {
					t.Errorf("%s reported %v; want %v", path, d.Err, want)
				}
			}
			for _, path := range tt.never {
				if err := etiquettetest.NeverRequest(path).Check(site.Requests()); err != nil {
					t.Error(err)
				}
			}
			if r.summary.OptionalSkipped != tt.skipped {
				t.Errorf("OptionalSkipped = %d; want %d", r.summary.OptionalSkipped, tt.skipped)
			}
			if d, ok := r.doc(o.URL + "/llms.txt"); !ok || d.Kind != kind.LLMs {
				t.Errorf("/llms.txt reported as %+v; want kind llms", d)
			}
		})
	}
}

func TestAWordPressAPIThatRefusesIsLeftToTheHTMLCrawl(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin().Robots("User-agent: *\nAllow: /\n")
	o.Serve("/", etiquettetest.HTMLPage("Blog").Header("Link", "</wp-json/>; rel=\"https://api.w.org/\""))
	o.Serve("/wp-json/wp/v2/posts", etiquettetest.Status(http.StatusUnauthorized))
	o.Serve("/wp-json/wp/v2/pages", etiquettetest.Status(http.StatusForbidden))

	r := discover(t, testDoor(t, o), o.URL+"/", plan.Options{}, nil)

	var api []string
	for _, req := range site.Requests() {
		if strings.HasPrefix(req.Path(), "/wp-json/") {
			api = append(api, req.Path())
		}
	}
	if strings.Join(api, " ") != "/wp-json/wp/v2/posts /wp-json/wp/v2/pages" {
		t.Fatalf("API requests %q; want one per listing and nothing more", api)
	}
	for _, d := range r.docs {
		if strings.Contains(d.URL, "/wp-json/") && (d.FoundVia != frontier.ViaAPI || d.Kind != kind.API || d.Status/100 != 4) {
			t.Errorf("API document %+v; want found via api, kind api, its 4xx", d)
		}
	}
	if len(r.items) != 1 || r.items[0].Via != frontier.ViaStart {
		t.Fatalf("queued %+v; want only the start page", r.items)
	}
}

func TestListingsCarryTheirLastModificationIntoTheFrontier(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin()
	o.Robots("User-agent: *\nAllow: /\nSitemap: " + o.URL + "/s.xml\n")
	o.Serve("/s.xml", etiquettetest.Text(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+
		`<url><loc>`+o.URL+`/dated</loc><lastmod>2026-03-01T10:00:00Z</lastmod></url>`+
		`<url><loc>`+o.URL+`/undated</loc></url></urlset>`))
	o.Page("/", "Home")

	r := discover(t, testDoor(t, o), o.URL+"/", plan.Options{}, nil)

	want := map[string]time.Time{o.URL + "/dated": time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), o.URL + "/undated": {}}
	for _, it := range r.items {
		if w, ok := want[it.URL]; ok && !it.LastMod.Equal(w) {
			t.Errorf("%s LastMod %v; want %v", it.URL, it.LastMod, w)
		}
	}
}

func TestASitemapThePageNamesVouchesOnlyForItsDirectory(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin().Robots("User-agent: *\nAllow: /\n")
	o.Serve("/", etiquettetest.HTMLPage("Home").Header("Link", "</blog/sitemap.xml>; rel=sitemap"))
	o.Serve("/blog/sitemap.xml", etiquettetest.Sitemap(o.URL+"/blog/post", o.URL+"/shop/item"))

	r := discover(t, testDoor(t, o), o.URL+"/", plan.Options{NoSitemapGuess: true}, nil)

	if got := r.via(o.URL + "/blog/post"); got != frontier.ViaSitemap {
		t.Errorf("/blog/post queued via %q; want sitemap", got)
	}
	if got := r.via(o.URL + "/shop/item"); got != "" {
		t.Errorf("/shop/item, outside the sitemap's directory, queued via %q", got)
	}
	d, ok := r.doc(o.URL + "/blog/sitemap.xml")
	if !ok || d.FoundVia != frontier.ViaLink || !errors.Is(d.Err, plan.ErrEntriesDropped) {
		t.Errorf("the sitemap reported %+v; want found via link, with its dropped entry", d)
	}
}

func TestNewNeedsTheDoorsClient(t *testing.T) {
	f, err := frontier.New(frontier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.New(plan.Config{Client: http.DefaultClient, Frontier: f}); !errors.Is(err, plan.ErrNoSitemapLister) {
		t.Fatalf("New with a plain client: %v; want ErrNoSitemapLister", err)
	}
}
