package crawler

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/discovery/plan"
	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// inFlight counts the requests the servers are answering at once, and the most there were.
type inFlight struct {
	now, most, served atomic.Int32
}

func (c *inFlight) begin() {
	n := c.now.Add(1)
	c.served.Add(1)
	for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
	}
}

func (c *inFlight) end() { c.now.Add(-1) }

// Workers bounds every request of the crawl, discovery's included: 60 slow origins, each
// discovered (robots.txt, the /sitemap.xml guess, llms.txt) and crawled, never have more than
// 4 requests at their servers at once with Workers 4. Before, each origin's discovery ran on its
// own, and the servers saw one robots.txt request per origin at once.
func TestWorkersBoundDiscoveryRequestsToo(t *testing.T) {
	const origins, workers = 60, 4
	var count inFlight
	var starts []string
	fast := map[string]float64{}
	for range origins {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			count.begin()
			defer count.end()
			<-time.After(20 * time.Millisecond) // a slow origin: requests overlap unless bounded
			if r.URL.Path == "/robots.txt" {
				io.WriteString(w, "User-agent: *\nAllow: /\n")
				return
			}
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><body>a page</body></html>")
		}))
		t.Cleanup(srv.Close)
		starts = append(starts, srv.URL+"/")
		fast[srv.Listener.Addr().String()] = 100
	}
	clock, err := hostclock.NewLocal(hostclock.Config{Authorized: fast, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	door, err := politeness.NewDoor(politeness.Policy{
		Identity: identity.Identity{Profile: identity.Generic, Token: "ExampleBot", Version: "1.0", InfoURL: "https://example.org/bot"},
		Clock:    clock, Robots: robots.NewKeeper(robots.Options{}), NoCache: true, Logger: slog.New(slog.DiscardHandler),
		AuthorizedRates: fast, Rate: 100,
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := frontier.New(frontier.Options{Pacer: clock, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	sum, err := Run(ctx, Config{Client: door.Client(), Start: starts, Frontier: f, Workers: workers,
		Discovery: &plan.Options{}, Logger: slog.New(slog.DiscardHandler)})

	if err != nil {
		t.Fatal(err)
	}
	if sum.Pages != origins {
		t.Errorf("%d pages fetched, want the %d start pages", sum.Pages, origins)
	}
	if served := count.served.Load(); served < 4*origins {
		t.Errorf("the servers answered %d requests; want robots.txt, /sitemap.xml, /llms.txt and the page of each origin (%d)", served, 4*origins)
	}
	if most := count.most.Load(); most > workers {
		t.Errorf("the servers had %d requests in flight at once; want at most Workers (%d)", most, workers)
	}
	t.Logf("%d requests, at most %d in flight", count.served.Load(), count.most.Load())
}
