package crawler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/politeness/hostclock"
)

// page is what a test site answers for one path; an HTML page by default.
type page struct {
	body   string
	ctype  string // "" means text/html; "-" sends no Content-Type
	status int
	header http.Header
}

func html(links ...string) page {
	var b strings.Builder
	b.WriteString("<html><body>")
	for _, l := range links {
		fmt.Fprintf(&b, `<a href="%s">%s</a>`, l, l)
	}
	b.WriteString("</body></html>")
	return page{body: b.String()}
}

// testSite serves pages and records the paths requested.
type testSite struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func newTestSite(t *testing.T, pages map[string]page) *testSite {
	s := &testSite{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.RequestURI())
		s.mu.Unlock()
		p, ok := pages[r.URL.RequestURI()]
		if !ok {
			http.NotFound(w, r)
			return
		}
		for k, v := range p.header {
			w.Header()[k] = v
		}
		switch p.ctype {
		case "":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		case "-":
			w.Header()["Content-Type"] = nil
		default:
			w.Header().Set("Content-Type", p.ctype)
		}
		if p.status != 0 {
			w.WriteHeader(p.status)
		}
		fmt.Fprint(w, p.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *testSite) requested() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(slices.Values(s.paths))
}

// crawl runs a crawl of s from "/" and returns the results by path.
func crawl(t *testing.T, s *testSite, cfg Config) (map[string]Result, Summary, error) {
	t.Helper()
	if cfg.Client == nil {
		cfg.Client = s.Client()
	}
	if cfg.Start == nil {
		cfg.Start = []string{s.URL + "/"}
	}
	cfg.Logger = slog.New(slog.DiscardHandler)
	if cfg.Frontier == nil {
		// No door here: a generous interval hint keeps the tests quick.
		f, err := frontier.New(frontier.Options{Rate: 1000, Logger: cfg.Logger})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Frontier = f
	}
	var mu sync.Mutex
	got := map[string]Result{}
	cfg.Report = func(r Result) {
		mu.Lock()
		defer mu.Unlock()
		p := strings.TrimPrefix(r.URL, s.URL)
		if _, dup := got[p]; dup {
			t.Errorf("%s reported twice", p)
		}
		got[p] = r
	}
	sum, err := Run(context.Background(), cfg)
	return got, sum, err
}

func paths(m map[string]Result) []string {
	return slices.Sorted(func(yield func(string) bool) {
		for p := range m {
			if !yield(p) {
				return
			}
		}
	})
}

func TestACrawlRunsUntilNoWorkerIsBusyAndReportsEveryURL(t *testing.T) {
	// A chain: after "/" the queue is empty until its links are read, and again after each page.
	s := newTestSite(t, map[string]page{
		"/":      html("/a", "/a#again", "mailto:x@y", "https://elsewhere.example/"),
		"/a":     html("/b", "/"),
		"/b":     html("/moved"),
		"/moved": {status: http.StatusMovedPermanently, header: http.Header{"Location": {"/c"}}},
		"/c":     {body: "<p>end</p>"},
	})
	got, sum, err := crawl(t, s, Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/", "/a", "/b", "/moved"}; !slices.Equal(paths(got), want) {
		t.Fatalf("reported %v; want %v", paths(got), want)
	}
	if r := got["/b"]; r.Depth != 3 || r.FoundVia != "link" || r.Status != 200 || r.Bytes == 0 || r.Kind != "html" {
		t.Fatalf("/b: %+v", r)
	}
	if r := got["/"]; r.Depth != 1 || r.FoundVia != "start" {
		t.Fatalf("/: %+v", r)
	}
	if r := got["/moved"]; r.FinalURL != s.URL+"/c" || r.Status != 200 {
		t.Fatalf("/moved: %+v; want the redirect's target as final URL", r)
	}
	if sum.Pages != 4 || sum.Failed != 0 || sum.NotFetched != 0 {
		t.Fatalf("summary %+v", sum)
	}
}

func TestMaxDepthLimitsHowFarLinksAreFollowed(t *testing.T) {
	site := map[string]page{
		"/":   html("/d2"),
		"/d2": html("/d3"),
		"/d3": html("/d4"),
		"/d4": html(),
	}
	tests := []struct {
		maxDepth int
		want     []string
	}{
		{1, []string{"/"}},
		{2, []string{"/", "/d2"}},
		{0, []string{"/", "/d2", "/d3", "/d4"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint("MaxDepth ", tt.maxDepth), func(t *testing.T) {
			s := newTestSite(t, site)
			got, _, err := crawl(t, s, Config{MaxDepth: tt.maxDepth})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(s.requested(), tt.want) || !slices.Equal(paths(got), tt.want) {
				t.Fatalf("requested %v, reported %v; want %v", s.requested(), paths(got), tt.want)
			}
		})
	}
}

func TestMaxPagesStopsAfterThatManyResponsesAndReportsTheRest(t *testing.T) {
	links := []string{"/1", "/2", "/3", "/4", "/5", "/6"}
	site := map[string]page{"/": html(links...)}
	for _, l := range links {
		site[l] = html()
	}
	s := newTestSite(t, site)
	got, sum, err := crawl(t, s, Config{MaxPages: 3})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.requested()); n != 3 {
		t.Fatalf("the site got %d requests %v; want 3", n, s.requested())
	}
	limited := 0
	for _, r := range got {
		if errors.Is(r.Err, ErrPageLimit) {
			limited++
		}
	}
	if len(got) != 7 || limited != 4 || sum.Pages != 3 || sum.NotFetched != 4 {
		t.Fatalf("%d reported, %d with ErrPageLimit, summary %+v; want 7, 4, 3 pages", len(got), limited, sum)
	}
}

func TestLinksAreFollowedOnlyFromFollowableHTML(t *testing.T) {
	tests := []struct {
		name string
		root page
		want []string
	}{
		{"HTML", html("/x"), []string{"/", "/x"}},
		{"HTML sniffed without a Content-Type", page{body: `<!doctype html><a href="/x">`, ctype: "-"}, []string{"/", "/x"}},
		{"plain text is read, not parsed", page{body: `<a href="/x">`, ctype: "text/plain"}, []string{"/"}},
		{"X-Robots-Tag nofollow", page{body: `<a href="/x">`, header: http.Header{"X-Robots-Tag": {"noindex, nofollow"}}}, []string{"/"}},
		{"robots meta nofollow", page{body: `<meta name="robots" content="nofollow"><a href="/x">`}, []string{"/"}},
		{"rel nofollow", page{body: `<a href="/x" rel="nofollow"><a href="/y">`}, []string{"/", "/y"}},
		{"an error page", page{body: `<a href="/x">`, status: http.StatusNotFound}, []string{"/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestSite(t, map[string]page{"/": tt.root, "/x": html(), "/y": html()})
			got, _, err := crawl(t, s, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(s.requested(), tt.want) {
				t.Fatalf("requested %v; want %v", s.requested(), tt.want)
			}
			if got["/"].Bytes != int64(len(tt.root.body)) {
				t.Fatalf("/ read %d bytes; want the whole body, %d", got["/"].Bytes, len(tt.root.body))
			}
		})
	}
}

func TestAGivenUpOriginsQueueIsReportedRefused(t *testing.T) {
	s := newTestSite(t, map[string]page{"/": html("/1", "/2", "/3"), "/1": html(), "/2": html(), "/3": html()})
	gu := &hostclock.GiveUpError{Origin: "test", Reason: "8 failures in a row", At: time.Now()}
	// The door gives the origin up while "/1" waits for its turn.
	client := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.URL.Path == "/1" {
			return nil, gu
		}
		return http.DefaultTransport.RoundTrip(req)
	})}
	got, sum, err := crawl(t, s, Config{Client: client, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/1", "/2", "/3"} {
		var e *hostclock.GiveUpError
		if !errors.As(got[p].Err, &e) {
			t.Fatalf("%s: %v; want the give-up", p, got[p].Err)
		}
	}
	if !slices.Equal(s.requested(), []string{"/"}) || sum.Failed != 3 {
		t.Fatalf("requested %v, summary %+v; want only / and 3 failed", s.requested(), sum)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestAnEndedContextStopsTheCrawlAndReportsWhatWasLeft(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	s := newTestSite(t, map[string]page{"/": html("/slow", "/a", "/b"), "/a": html(), "/b": html()})
	site := s.Config.Handler
	s.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(arrived)
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		site.ServeHTTP(w, r)
	})
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	got := map[string]error{}
	done := make(chan error)
	go func() {
		_, err := Run(ctx, Config{Client: s.Client(), Start: []string{s.URL + "/"}, Workers: 1, Logger: slog.New(slog.DiscardHandler),
			Report: func(r Result) { mu.Lock(); got[strings.TrimPrefix(r.URL, s.URL)] = r.Err; mu.Unlock() }})
		done <- err
	}()
	<-arrived
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v; want context.Canceled", err)
	}
	if !errors.Is(got["/a"], ErrInterrupted) || !errors.Is(got["/b"], ErrInterrupted) || got["/slow"] == nil || got["/"] != nil {
		t.Fatalf("reported %v; want / fetched, /slow failed, /a and /b interrupted", got)
	}
}

type failingPacer struct{}

func (failingPacer) Earliest(string) (time.Time, error) {
	return time.Time{}, errors.New("redis: connection refused")
}

func TestAFailingFrontierStopsTheCrawl(t *testing.T) {
	s := newTestSite(t, map[string]page{"/": html()})
	f, err := frontier.New(frontier.Options{Pacer: failingPacer{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := crawl(t, s, Config{Frontier: f})
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Run: %v; want the pacer's error", err)
	}
	if !errors.Is(got["/"].Err, ErrInterrupted) || len(s.requested()) != 0 {
		t.Fatalf("/ reported %v, site got %v; want it interrupted and nothing sent", got["/"].Err, s.requested())
	}
}

func TestRunRefusesAnUnusableConfig(t *testing.T) {
	if _, err := Run(context.Background(), Config{}); !errors.Is(err, ErrNoClient) {
		t.Fatalf("no client: %v; want ErrNoClient", err)
	}
	if _, err := Run(context.Background(), Config{Client: http.DefaultClient, MaxDepth: -1}); err == nil {
		t.Fatal("a negative MaxDepth was accepted")
	}
}

func TestAStartURLTheFrontierRefusesIsReported(t *testing.T) {
	var got []Result
	_, err := Run(context.Background(), Config{Client: http.DefaultClient, Start: []string{"ftp://example.org/"},
		Report: func(r Result) { got = append(got, r) }})
	if err != nil || len(got) != 1 || !errors.Is(got[0].Err, frontier.ErrBadURL) {
		t.Fatalf("Run: %v, reported %+v; want the start URL reported with ErrBadURL", err, got)
	}
}
