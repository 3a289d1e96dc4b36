package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/report"
)

// linkedSite is one origin whose pages link as links says; robots.txt allows everything and
// every other path is a leaf page.
func linkedSite(t *testing.T, links map[string][]string) *etiquettetest.Origin {
	t.Helper()
	site := etiquettetest.NewSite()
	t.Cleanup(site.Close)
	o := site.NewOrigin().Robots("User-agent: *\nAllow: /\n").Otherwise(etiquettetest.HTMLPage("leaf"))
	for path, l := range links {
		o.Page(path, path, l...)
	}
	return o
}

// pagesRequested lists the paths the origin was asked for, robots.txt aside, sorted.
func pagesRequested(o *etiquettetest.Origin) []string {
	var paths []string
	for _, r := range o.Requests() {
		if r.Target != "/robots.txt" {
			paths = append(paths, r.Target)
		}
	}
	slices.Sort(paths)
	return paths
}

// crawlSite crawls the origin from / at 50 starts per second (authorised for it), with the
// extra flags.
func crawlSite(t *testing.T, o *etiquettetest.Origin, extra ...string) (code int, lines []line, stderr string) {
	t.Helper()
	args := append([]string{"crawl", "--no-cache", "--authorized-rate", o.Addr() + "=50"}, identityArgs...)
	args = append(append(args, extra...), o.URL+"/")
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
			s := linkedSite(t, chain)
			code, _, errOut := crawlSite(t, s, "--max-depth", c.maxDepth, "--no-discovery")
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if got := pagesRequested(s); !slices.Equal(got, c.want) {
				t.Errorf("--max-depth %s fetched %q, want %q", c.maxDepth, got, c.want)
			}
		})
	}
}

// TestCrawlMaxPages: --max-pages N fetches N pages, and the URLs still queued are reported, not
// fetched, with the limit as the reason: one line for the origin, with their count.
func TestCrawlMaxPages(t *testing.T) {
	var leaves []string
	for i := range 10 {
		leaves = append(leaves, fmt.Sprintf("/p%d", i))
	}
	s := linkedSite(t, map[string][]string{"/": leaves})
	code, lines, errOut := crawlSite(t, s, "--max-pages", "3", "--no-discovery")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := pagesRequested(s); len(got) != 3 {
		t.Errorf("--max-pages 3 fetched %q, want 3 pages", got)
	}
	fetched, limited := 0, 0
	for _, l := range lines {
		switch {
		case l.Kind == "robots":
		case l.Status != 0:
			fetched++
		case l.Refused == "limit" && l.Reason == "not fetched: --max-pages reached" && l.Limit == "max-pages" && l.URL == s.URL:
			limited += l.Count
		default:
			t.Errorf("unexpected line %+v", l)
		}
	}
	if fetched != 3 || limited != 8 {
		t.Errorf("%d lines of fetched pages and %d of pages left for the limit; want 3 and 8 (11 URLs known)", fetched, limited)
	}
	if len(lines) != 1+3+1 {
		t.Errorf("%d lines; want robots.txt, the 3 pages and one line for the limit", len(lines))
	}
	if !strings.Contains(errOut, "limit 8") || strings.Count(errOut, "limit max-pages on "+s.URL+": 8 ") != 1 {
		t.Errorf("the summary does not count the 8 URLs left on one line: %s", errOut)
	}
}

// TestCrawlQueueCap: an origin's queue holds --max-queue URLs; links beyond are dropped, never
// fetched, and counted in the summary — as are the links of a page beyond --max-queue. One
// worker makes the counts exact: nothing leaves the queue while a page is read.
func TestCrawlQueueCap(t *testing.T) {
	s := linkedSite(t, map[string][]string{
		"/":  {"/a", "/b"},
		"/a": {"/a1", "/a2", "/a3"},        // /a1 and /a2 join /b in the queue; /a3 is dropped
		"/b": {"/b1", "/b2", "/b3", "/b4"}, // /b1 fills the queue again; /b2 and /b3 are dropped; /b4 is beyond 3 links
	})
	code, _, errOut := crawlSite(t, s, "--max-queue", "3", "--workers", "1", "--no-discovery")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got, want := pagesRequested(s), []string{"/", "/a", "/a1", "/a2", "/b", "/b1"}; !slices.Equal(got, want) {
		t.Errorf("fetched %q, want %q", got, want)
	}
	if want := "dropped 3 URLs over the queue cap of " + s.Addr(); !strings.Contains(errOut, want) {
		t.Errorf("the summary does not say %q:\n%s", want, errOut)
	}
	if want := "did not follow 1 links beyond the first 3 of their page"; !strings.Contains(errOut, want) {
		t.Errorf("the summary does not say %q:\n%s", want, errOut)
	}
}

// TestCrawlRefusesUnusableLimits: limits the crawl cannot run with are unusable input.
func TestCrawlRefusesUnusableLimits(t *testing.T) {
	for _, flags := range [][]string{{"--workers", "0"}, {"--max-queue", "0"}, {"--max-pages", "-1"}, {"--max-depth", "-1"}, {"--latency-factor", "0"}} {
		args := append(append(append([]string{"crawl", "--no-cache"}, identityArgs...), flags...), "http://127.0.0.1:1/")
		if code, out, errOut := runCLI(t, nil, args...); code != exitUsage || out != "" || !strings.Contains(errOut, flags[0]) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 naming the flag", flags, code, out, errOut)
		}
	}
}

// TestCrawlRedirectLine: a link that redirects has one line, for the URL as found, with the
// final URL and the final answer's status.
func TestCrawlRedirectLine(t *testing.T) {
	s := linkedSite(t, map[string][]string{"/": {"/old"}})
	s.Serve("/old", etiquettetest.Redirect(http.StatusMovedPermanently, "/new"))
	code, lines, errOut := crawlSite(t, s)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var old []line
	for _, l := range lines {
		if l.URL == s.URL+"/old" || l.URL == s.URL+"/new" {
			old = append(old, l)
		}
	}
	if len(old) != 1 || old[0].URL != s.URL+"/old" || old[0].FinalURL != s.URL+"/new" || old[0].Status != 200 || old[0].FoundVia != "link" {
		t.Errorf("lines for /old and /new: %+v; want one, for /old, with final_url /new and status 200", old)
	}
}

// TestCrawlReportDir: crawl --report DIR writes the report directory of the crawl, its events
// and a page with the origin's timeline, and still prints the JSON lines.
func TestCrawlReportDir(t *testing.T) {
	o := linkedSite(t, map[string][]string{"/": {"/a"}})
	dir := t.TempDir()
	code, lines, errOut := crawlSite(t, o, "--report", dir)
	if code != exitOK || len(lines) == 0 {
		t.Fatalf("crawl --report: exit %d, %d lines; stderr:\n%s", code, len(lines), errOut)
	}
	html, err := os.ReadFile(filepath.Join(dir, report.HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), o.Addr()) || !strings.Contains(string(html), "<svg") {
		t.Errorf("%s does not show %s with a timeline", report.HTMLFile, o.Addr())
	}
	evs, err := os.ReadFile(filepath.Join(dir, report.EventsFile))
	if err != nil || !strings.Contains(string(evs), o.URL+"/a") {
		t.Errorf("%s does not record the request for /a: %v", report.EventsFile, err)
	}
	// The demo's per-origin report goes to stderr; stdout keeps only the JSON lines.
	if !strings.Contains(errOut, o.Addr()+"\n  requests ") || !strings.Contains(errOut, "report written to "+filepath.Join(dir, report.HTMLFile)) {
		t.Errorf("crawl --report prints no per-origin report on stderr:\n%s", errOut)
	}
}
