package report_test

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/robots"
	"github.com/politecrawl/etiquette/report"
)

// A page past its kind's body cap is answered 200 by the site, but the crawl read only the cap:
// the report counts it as cut, apart from the 200s, once. Before, it was one more 200 (and a
// "truncated" notice besides).
func TestAPageCutAtItsCapIsNotShownAsA200(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin().Robots("User-agent: *\nAllow: /\n")
	o.Page("/small", "Small")
	o.Serve("/big", etiquettetest.Text(strings.Repeat("x", 4<<10)).ContentType("text/html"))

	bus := &events.Bus{}
	rec := report.NewRecorder(report.Options{})
	bus.Subscribe(rec.Record)
	clock, err := hostclock.NewLocal(hostclock.Config{Authorized: map[string]float64{o.Addr(): 100}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	door, err := politeness.NewDoor(politeness.Policy{
		Identity: identity.Identity{Profile: identity.Generic, Token: "ExampleBot", Version: "1.0", InfoURL: "https://example.org/bot"},
		Clock:    clock, Robots: robots.NewKeeper(robots.Options{}), NoCache: true, Logger: slog.New(slog.DiscardHandler),
		AuthorizedRates: map[string]float64{o.Addr(): 100}, Rate: 100, Events: bus,
		MaxBodyBytes: map[kind.Kind]int64{kind.HTML: 1 << 10},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/small", "/big"} {
		resp, err := door.Client().Get(o.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s answered %d", path, resp.StatusCode)
		}
	}

	r := rec.Report(nil)
	got := r.Origins[0]
	want(t, "statuses (robots.txt and the small page)", got.Statuses, map[int]int{200: 2})
	want(t, "cut", got.Cut, 1)
	want(t, "requests", got.Requests, 3)
	if got.Notices["truncated"] != 0 {
		t.Errorf("notices %v: the cut page is counted twice", got.Notices)
	}
	if s := text(t, r); !strings.Contains(s, "statuses     200 2, cut 1 (body past its cap)\n") {
		t.Errorf("the text does not show the cut page apart from the 200s:\n%s", s)
	}
}
