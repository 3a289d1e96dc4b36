package politeness

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/politecrawl/etiquette/cookies"
	"github.com/politecrawl/etiquette/politeness/cache"
)

// syncBuffer is a log destination safe for the door's concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// defaultLogger makes slog.Default a Warn-level text logger for the test — what a library user
// sees with no logger configured — and returns its output. Tests using it must not run in
// parallel.
func defaultLogger(t *testing.T) *syncBuffer {
	t.Helper()
	var out syncBuffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelWarn})))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &out
}

// warnings returns the Warn lines of the log that contain every one of words.
func warnings(log string, words ...string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if !strings.Contains(l, "level=WARN") {
			continue
		}
		all := true
		for _, w := range words {
			all = all && strings.Contains(l, w)
		}
		if all {
			out = append(out, l)
		}
	}
	return out
}

// TestFailedLoginWarns: a login without a purpose ends on the login form; with no logger
// configured the operator gets one warning per origin naming the refused session cookie, its
// category and the Policy field that keeps it — not only a Debug line.
func TestFailedLoginWarns(t *testing.T) {
	log := defaultLogger(t)
	site := newLoginSite(t, "_shop_session")
	d := testDoor(t, site.Server, func(p *Policy) { p.Logger = nil })
	for range 2 {
		if body := login(t, d, site.URL); body == membersPage {
			t.Fatal("the login worked without a purpose")
		}
	}
	got := warnings(log.String(), "_shop_session", "session", "Policy.Cookies.Login", site.URL)
	if len(got) != 1 {
		t.Errorf("%d warnings naming the refused session cookie, its category and Policy.Cookies.Login; want 1. Log:\n%s", len(got), log)
	}
	if strings.Contains(strings.Join(got, ""), "_ga (") {
		t.Errorf("the warning names the tracker, which no Policy field keeps: %s", got)
	}
}

// TestALoginFormAnsweredInPlaceWarns: a site that answers a login form with a session cookie and a
// page of its own (no redirect) loses the session as surely; the door says so once per origin at
// the form's answer, naming the cookie, its category and the Policy field that keeps it.
func TestALoginFormAnsweredInPlaceWarns(t *testing.T) {
	log := defaultLogger(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt":
			io.WriteString(w, "User-agent: *\nAllow: /\n")
		case r.Method == http.MethodPost:
			http.SetCookie(w, &http.Cookie{Name: "_shop_session", Value: "s1", Path: "/"})
			http.SetCookie(w, &http.Cookie{Name: "_ga", Value: "GA1.2.3", Path: "/"})
			io.WriteString(w, "Welcome back")
		default:
			io.WriteString(w, "Please log in")
		}
	}))
	defer srv.Close()
	d := testDoor(t, srv, func(p *Policy) { p.Logger = nil })
	for range 2 {
		resp, err := d.Client().Post(srv.URL+"/login", "application/x-www-form-urlencoded", strings.NewReader("user=a&password=b"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	got := warnings(log.String(), "_shop_session", "session", "Policy.Cookies.Login", "POST")
	if len(got) != 1 {
		t.Errorf("%d warnings naming the refused session cookie of a form's answer; want 1. Log:\n%s", len(got), log)
	}
}

// TestScraperCookieHeaderWarns: a Cookie header set by the scraper (a Colly OnRequest callback,
// or Colly's jar after c.SetCookies) is not sent without a purpose that keeps it, and says so once
// per origin; with Purpose.Login for the origin the session in it is sent and the rest dropped.
func TestScraperCookieHeaderWarns(t *testing.T) {
	log := defaultLogger(t)
	var mu sync.Mutex
	var received []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		received = append(received, r.Header.Get("Cookie"))
		mu.Unlock()
		io.WriteString(w, "User-agent: *\nAllow: /\n")
	}))
	defer srv.Close()
	get := func(d *Door, path string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Header.Set("Cookie", "sid=abc; theme=dark; _ga=GA1.2.3")
		resp, err := d.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}

	stateless := testDoor(t, srv, func(p *Policy) { p.Logger = nil })
	get(stateless, "/a")
	get(stateless, "/b")
	if got := warnings(log.String(), "Cookie header", "sid (session", "theme (unknown", "Policy.Cookies"); len(got) != 1 {
		t.Errorf("%d warnings naming the header's cookies and Policy.Cookies; want 1. Log:\n%s", len(got), log)
	}
	mu.Lock()
	for _, c := range received {
		if c != "" {
			t.Errorf("a stateless door sent Cookie %q", c)
		}
	}
	received = nil
	mu.Unlock()

	login := testDoor(t, srv, func(p *Policy) { p.Logger = nil; p.Cookies = &cookies.Purpose{Login: []string{srv.URL}} })
	get(login, "/c")
	mu.Lock()
	defer mu.Unlock()
	if len(received) == 0 || received[len(received)-1] != "sid=abc" {
		t.Errorf("with Purpose.Login for the origin the site received Cookie %q; want only the session, sid=abc", received)
	}
	got := warnings(log.String(), "Cookie header", "theme (unknown", "Policy.Cookies.Allow")
	if len(got) != 2 || strings.Contains(got[1], "sid (") {
		t.Errorf("the second door's warning should name the dropped theme cookie and Policy.Cookies.Allow, not the session it sent. Log:\n%s", log)
	}
}

// TestEverySetCookieIsCounted: a site that sets a cookie on each of N pages gets N refusals in
// the door's Stats — also when the cache revalidates the pages and the cookie comes on a 304, and
// when the cookie's value is one net/http's parser drops (a JSON value).
func TestEverySetCookieIsCounted(t *testing.T) {
	const n = 20
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Set-Cookie", "_ga=GA1.2.3; Path=/")
		w.Header().Add("Set-Cookie", `prefs={"theme":"dark"}; Path=/`)
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Cache-Control", "no-cache")
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		io.WriteString(w, "User-agent: *\nAllow: /\n")
	}))
	defer srv.Close()
	d := testDoor(t, srv, func(p *Policy) { p.NoCache = false; p.CacheStore = cache.NewMemoryStore(1 << 20) })
	for pass := range 2 {
		for i := range n {
			resp, err := d.Client().Get(fmt.Sprintf("%s/p%d", srv.URL, i))
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if got := resp.Header.Values("Set-Cookie"); len(got) != 0 {
				t.Fatalf("pass %d: Set-Cookie %q reached the caller", pass+1, got)
			}
		}
	}
	s := d.Stats()
	// Two passes of n pages, and robots.txt read once.
	want := 2*n + 1
	if s.Cache["revalidated"] != n {
		t.Fatalf("the second pass was not revalidated (cache %v); the test does not test the 304s", s.Cache)
	}
	if got := s.CookiesRefused["analytics"]; got != want {
		t.Errorf("analytics cookies refused: %d, want %d (one per response, 304s included)", got, want)
	}
	if got := s.CookiesRefused["malformed"]; got != want {
		t.Errorf("malformed cookies refused: %d, want %d (counted, not silently dropped); all: %v", got, want, s.CookiesRefused)
	}
}
