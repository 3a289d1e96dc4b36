package politeness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/robots"
)

func TestRobotsGate(t *testing.T) {
	robotsTxt := map[string]func() (*http.Response, error){
		"https://a.example/robots.txt": answerRobots(200, "User-agent: ExampleBot\nDisallow: /private\nCrawl-delay: 4\n"),
		"https://b.example/robots.txt": answerRobots(503, ""),
		"https://c.example/robots.txt": func() (*http.Response, error) { return nil, errors.New("connection refused") },
	}
	var fetches atomic.Int32
	fetch := func(_ context.Context, robotsURL string) (*http.Response, error) {
		fetches.Add(1)
		return robotsTxt[robotsURL]()
	}
	tests := []struct {
		name       string
		url        string
		internal   bool
		wantSent   bool
		wantReason string // of the Refused event; "" when admitted
		wantErr    error
	}{
		{name: "allowed", url: "https://a.example/page", wantSent: true},
		{name: "disallowed for the token", url: "https://a.example/private/x", wantReason: "robots", wantErr: robots.ErrDisallowed},
		{name: "a redirect hop is decided like any URL", url: "https://a.example/private/hop", wantReason: "robots", wantErr: robots.ErrDisallowed},
		{name: "a 503 robots.txt disallows the origin (RFC 9309 §2.3.1.4)", url: "https://b.example/page", wantReason: "robots", wantErr: robots.ErrDisallowed},
		{name: "an unreachable robots.txt disallows the origin", url: "https://c.example/page", wantReason: "robots", wantErr: robots.ErrDisallowed},
		{name: "the door's own robots.txt request passes", url: "https://d.example/robots.txt", internal: true, wantSent: true},
	}
	clock, err := hostclock.NewLocal(hostclock.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	keeper := robots.NewKeeper(robots.Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next, sink := &recorder{}, &eventLog{}
			req, _ := http.NewRequest(http.MethodGet, tt.url, nil)
			if tt.internal {
				req = req.WithContext(markInternal(req.Context()))
			}
			_, err := robotsGate(next, keeper, robots.ForCrawler("ExampleBot"), fetch, clock, sink).RoundTrip(req)
			if sent := next.last() != nil; sent != tt.wantSent {
				t.Errorf("sent %v, want %v (err %v)", sent, tt.wantSent, err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) || tt.wantErr == nil && err != nil {
				t.Errorf("err %v, want %v", err, tt.wantErr)
			}
			refused, admitted := sink.of(events.Refused), sink.of(events.Admitted)
			switch {
			case tt.internal:
				if len(refused)+len(admitted) != 0 {
					t.Errorf("events %v for the door's own request", sink.ev)
				}
			case tt.wantReason == "":
				if len(admitted) != 1 || len(refused) != 0 {
					t.Errorf("events %v, want one Admitted", sink.ev)
				}
			default:
				if len(refused) != 1 || refused[0].Reason != tt.wantReason || !strings.Contains(refused[0].Detail, "robots.txt") {
					t.Errorf("events %v, want one Refused (%s) naming robots.txt", sink.ev, tt.wantReason)
				}
			}
		})
	}
	if n := fetches.Load(); n != 3 {
		t.Errorf("%d robots.txt fetches, want one per origin decided (3)", n)
	}
	for _, s := range clock.Stats() {
		if s.Origin == "a.example" && s.Floor != 4*time.Second {
			t.Errorf("a.example's floor is %v, want the Crawl-delay of 4 s", s.Floor)
		}
	}
}

func answerRobots(status int, body string) func() (*http.Response, error) {
	return func() (*http.Response, error) {
		return &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}, nil
	}
}

// RFC 9309 §2.3.1.2: a crawler follows at least five consecutive redirects for robots.txt; the
// door follows exactly five, and a longer chain makes robots.txt unreachable: the origin is
// disallowed, so the page is not fetched.
func TestRobotsTxtFollowsFiveRedirectsAndNoMore(t *testing.T) {
	for _, tt := range []struct {
		redirects int
		wantPage  bool
	}{{0, true}, {5, true}, {6, false}, {20, false}} {
		var page atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var hop int
			switch _, err := fmt.Sscanf(r.URL.Path, "/robots-%d.txt", &hop); {
			case r.URL.Path == "/robots.txt" && tt.redirects > 0:
				http.Redirect(w, r, "/robots-1.txt", http.StatusFound)
			case err == nil && hop < tt.redirects:
				http.Redirect(w, r, "/robots-"+strconv.Itoa(hop+1)+".txt", http.StatusFound)
			case strings.HasPrefix(r.URL.Path, "/robots"):
				io.WriteString(w, "User-agent: *\nAllow: /\n")
			default:
				page.Add(1)
				io.WriteString(w, "page")
			}
		}))
		d := testDoor(t, srv, nil)
		resp, err := d.Client().Get(srv.URL + "/page")
		if err == nil {
			resp.Body.Close()
		}
		if got := page.Load() == 1; got != tt.wantPage {
			t.Errorf("robots.txt behind %d redirects: page fetched %v, want %v (err %v)", tt.redirects, got, tt.wantPage, err)
		}
		if !tt.wantPage && !errors.Is(err, robots.ErrDisallowed) {
			t.Errorf("robots.txt behind %d redirects: err %v, want the page disallowed", tt.redirects, err)
		}
		srv.Close()
	}
}
