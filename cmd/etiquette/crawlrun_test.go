package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// pathSite is a site whose pages link as links says; it records the paths requested (robots.txt
// aside).
type pathSite struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func newPathSite(t *testing.T, links map[string][]string) *pathSite {
	t.Helper()
	s := &pathSite{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
			return
		}
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		for _, l := range links[r.URL.Path] {
			fmt.Fprintf(w, "<a href=%q>link</a>\n", l)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *pathSite) requested() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(slices.Values(s.paths))
}

// crawlSite crawls the site from / at 50 starts per second (authorised for the loopback
// origin), with the extra flags.
func crawlSite(t *testing.T, s *pathSite, extra ...string) (code int, lines []line, stderr string) {
	t.Helper()
	args := append([]string{"crawl", "--no-cache", "--authorized-rate", s.Listener.Addr().String() + "=50"}, identityArgs...)
	args = append(append(args, extra...), s.URL+"/")
	code, out, errOut := runCLI(t, nil, args...)
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("stdout line %q is not JSON: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	return code, lines, errOut
}

// TestCrawlMaxDepth: start URLs are depth 1, the links on a depth-d page d+1, and --max-depth N
// fetches the pages of depth N at most; 0 fetches every depth.
func TestCrawlMaxDepth(t *testing.T) {
	chain := map[string][]string{"/": {"/d2"}, "/d2": {"/d3"}, "/d3": {"/d4"}}
	cases := []struct {
		maxDepth string
		want     []string
	}{
		{"1", []string{"/"}},
		{"2", []string{"/", "/d2"}},
		{"0", []string{"/", "/d2", "/d3", "/d4"}},
	}
	for _, c := range cases {
		t.Run("max-depth "+c.maxDepth, func(t *testing.T) {
			s := newPathSite(t, chain)
			code, _, errOut := crawlSite(t, s, "--max-depth", c.maxDepth)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if got := s.requested(); !slices.Equal(got, c.want) {
				t.Errorf("--max-depth %s fetched %q, want %q", c.maxDepth, got, c.want)
			}
		})
	}
}

// TestCrawlMaxPages: --max-pages N fetches N pages, and every URL still queued is reported, not
// fetched, with the limit as the reason.
func TestCrawlMaxPages(t *testing.T) {
	var leaves []string
	for i := range 10 {
		leaves = append(leaves, fmt.Sprintf("/p%d", i))
	}
	s := newPathSite(t, map[string][]string{"/": leaves})
	code, lines, errOut := crawlSite(t, s, "--max-pages", "3")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := s.requested(); len(got) != 3 {
		t.Errorf("--max-pages 3 fetched %q, want 3 pages", got)
	}
	fetched, limited := 0, 0
	for _, l := range lines {
		switch {
		case l.Kind == "robots":
		case l.Status != 0:
			fetched++
		case l.Refused == "limit" && l.Reason == "not fetched: --max-pages reached":
			limited++
		default:
			t.Errorf("unexpected line %+v", l)
		}
	}
	if fetched != 3 || limited != 8 {
		t.Errorf("%d lines of fetched pages and %d of pages left for the limit; want 3 and 8 (11 URLs known)", fetched, limited)
	}
	if !strings.Contains(errOut, "limit 8") {
		t.Errorf("the summary does not count the 8 URLs left: %s", errOut)
	}
}

// TestCrawlQueueCap: an origin's queue holds --max-queue URLs; links beyond are dropped, never
// fetched, and counted in the summary — as are the links of a page beyond --max-queue. One
// worker makes the counts exact: nothing leaves the queue while a page is read.
func TestCrawlQueueCap(t *testing.T) {
	s := newPathSite(t, map[string][]string{
		"/":  {"/a", "/b"},
		"/a": {"/a1", "/a2", "/a3"},        // /a1 and /a2 join /b in the queue; /a3 is dropped
		"/b": {"/b1", "/b2", "/b3", "/b4"}, // /b1 fills the queue again; /b2 and /b3 are dropped; /b4 is beyond 3 links
	})
	code, _, errOut := crawlSite(t, s, "--max-queue", "3", "--workers", "1")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got, want := s.requested(), []string{"/", "/a", "/a1", "/a2", "/b", "/b1"}; !slices.Equal(got, want) {
		t.Errorf("fetched %q, want %q", got, want)
	}
	if want := "dropped 3 URLs over the queue cap of " + s.Listener.Addr().String(); !strings.Contains(errOut, want) {
		t.Errorf("the summary does not say %q:\n%s", want, errOut)
	}
	if want := "did not follow 1 links beyond the first 3 of their page"; !strings.Contains(errOut, want) {
		t.Errorf("the summary does not say %q:\n%s", want, errOut)
	}
}

// TestCrawlRefusesUnusableLimits: limits the crawl cannot run with are unusable input.
func TestCrawlRefusesUnusableLimits(t *testing.T) {
	for _, flags := range [][]string{{"--workers", "0"}, {"--max-queue", "0"}, {"--max-pages", "-1"}, {"--max-depth", "-1"}} {
		args := append(append(append([]string{"crawl", "--no-cache"}, identityArgs...), flags...), "http://127.0.0.1:1/")
		if code, out, errOut := runCLI(t, nil, args...); code != exitUsage || out != "" || !strings.Contains(errOut, flags[0]) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 naming the flag", flags, code, out, errOut)
		}
	}
}

// TestCrawlRedirectLine: a link that redirects has one line, for the URL as found, with the
// final URL and the final answer's status.
func TestCrawlRedirectLine(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case "/":
			fmt.Fprint(w, `<a href="/old">old</a>`)
		case "/old":
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
		default:
			fmt.Fprint(w, "<p>new</p>")
		}
	}))
	defer srv.Close()
	code, lines, errOut := crawlSite(t, &pathSite{Server: srv})
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var old []line
	for _, l := range lines {
		if l.URL == srv.URL+"/old" || l.URL == srv.URL+"/new" {
			old = append(old, l)
		}
	}
	if len(old) != 1 || old[0].URL != srv.URL+"/old" || old[0].FinalURL != srv.URL+"/new" || old[0].Status != 200 || old[0].FoundVia != "link" {
		t.Errorf("lines for /old and /new: %+v; want one, for /old, with final_url /new and status 200", old)
	}
}
