package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/report"
)

// originRequests reads "host:port" → the requests figure from the text report of one pass.
func originRequests(t *testing.T, text string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, block := range regexp.MustCompile(`(?m)^(?:\w+ \()?(127\.0\.0\.1:\d+)\)?\n  requests +(\d+)`).FindAllStringSubmatch(text, -1) {
		m[block[1]] = block[2]
	}
	return m
}

// TestDemoReportsEveryOrigin: demo crawls the four origins of the demo site and prints a report in
// which each of them received requests. It crawls in real time (about 6 s).
func TestDemoReportsEveryOrigin(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls the demo site in real time (about 6 s)")
	}
	t.Parallel()
	code, out, errOut := runCLI(t, nil, "demo")
	if code != exitOK {
		t.Fatalf("demo: exit %d, want 0; stderr:\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "EtiquetteDemoBot, an identity that only fits this demo site") {
		t.Errorf("demo does not say on stderr that its identity only fits the demo:\n%s", errOut)
	}
	for _, name := range []string{"blog", "shop", "docs", "archive"} {
		if !regexp.MustCompile(`(?m)^` + name + ` \(127\.0\.0\.1:\d+\)$`).MatchString(out) {
			t.Errorf("the report does not name the %s origin: no line %q", name, name+" (127.0.0.1:PORT)")
		}
	}
	reqs := originRequests(t, out)
	if len(reqs) != 4 {
		t.Fatalf("report shows %d origins with a requests line, want 4:\n%s", len(reqs), out)
	}
	for origin, n := range reqs {
		if n == "0" {
			t.Errorf("report shows no requests to %s:\n%s", origin, out)
		}
	}
	// Every section of the report shows a non-zero figure for some origin: the demo site
	// exercises each behaviour the report describes.
	// The figure is the count after a name ("miss 10", "200 8", "blocked 3"), not any digit on
	// the line ("budget of 3/s", "answered 200").
	word := `\b[A-Za-z][\w-]* [1-9]`
	for section, figure := range map[string]string{
		"requests": `[1-9]`, "statuses": `.*\b\d{3} [1-9]`, "waits": `.*` + word, "robots.txt": `.*blocked [1-9]`,
		"pauses": `.*` + word, "cache": `.*` + word, "cookies": `refused: .*` + word, "found via": `.*` + word,
		"budget": `3/s; 1.5/s from .* \(after a 429\)`,
	} {
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(section) + ` +` + figure).MatchString(out) {
			t.Errorf("no origin shows a non-zero figure under %q:\n%s", section, out)
		}
	}
}

// TestDemoTwiceWritesReports: with --twice --report DIR the demo writes a report directory per
// pass, with the timelines drawn in index.html, and the second pass, through the same cache, is
// answered 304 (the report's "revalidated"). It crawls twice in real time (about 10 s).
func TestDemoTwiceWritesReports(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls the demo site twice in real time (about 10 s)")
	}
	t.Parallel()
	dir := t.TempDir()
	code, out, errOut := runCLI(t, nil, "demo", "--twice", "--report", dir)
	if code != exitOK {
		t.Fatalf("demo --twice: exit %d, want 0; stderr:\n%s", code, errOut)
	}
	for _, pass := range []string{"pass1", "pass2"} {
		// Each pass of the demo finishes in under 30 s (issue 16; about 7 s here).
		var first, last time.Time
		for _, e := range readEvents(t, filepath.Join(dir, pass, report.EventsFile)) {
			if first.IsZero() || e.Time.Before(first) {
				first = e.Time
			}
			if e.Time.After(last) {
				last = e.Time
			}
		}
		if span := last.Sub(first); span >= 30*time.Second {
			t.Errorf("%s took %s from its first event to its last; a pass must finish in under 30 s", pass, span)
		}
		page, err := os.ReadFile(filepath.Join(dir, pass, report.HTMLFile))
		if err != nil {
			t.Fatalf("demo --report: %v", err)
		}
		if !strings.Contains(string(page), "<svg") {
			t.Errorf("%s/%s draws no timeline (no <svg)", pass, report.HTMLFile)
		}
		if _, err := html.ParseWithOptions(bytes.NewReader(page), html.ParseOptionEnableScripting(false)); err != nil {
			t.Errorf("%s/%s does not parse as HTML: %v", pass, report.HTMLFile, err)
		}
		if st, err := os.Stat(filepath.Join(dir, pass, report.EventsFile)); err != nil || st.Size() == 0 {
			t.Errorf("%s/%s missing or empty: %v", pass, report.EventsFile, err)
		}
	}
	_, second, ok := strings.Cut(out, "pass 2 of 2\n")
	if !ok {
		t.Fatalf("demo --twice prints no second report:\n%s", out)
	}
	if !strings.Contains(second, "revalidated") {
		t.Errorf("the second pass shows no 304 (revalidated) answers:\n%s", second)
	}
	// The site answered the second pass 304, and its statuses say so, not 200.
	if !regexp.MustCompile(`(?m)^  statuses +304 \d+ \(revalidated: the cache's copy served\)$`).MatchString(second) ||
		regexp.MustCompile(`(?m)^  statuses +200`).MatchString(second) {
		t.Errorf("the second pass's statuses do not show its revalidations as 304s:\n%s", second)
	}
	for _, pass := range []string{"pass1", "pass2"} {
		page, err := os.ReadFile(filepath.Join(dir, pass, report.HTMLFile))
		if err != nil {
			t.Fatal(err)
		}
		// The page opens with what the demo site does, and names the origins after it.
		for _, s := range []string{"The demo site runs four origins on loopback ports", "<h2>blog (127.0.0.1:", "<h2>shop (127.0.0.1:",
			"<h2>docs (127.0.0.1:", "<h2>archive (127.0.0.1:"} {
			if !strings.Contains(string(page), s) {
				t.Errorf("%s/%s lacks %q", pass, report.HTMLFile, s)
			}
		}
		// Every origin's plot has the same x axis: the same tick labels.
		ticks := map[string]bool{}
		for _, m := range regexp.MustCompile(`(?s)>seconds since the crawl began</text>(.*?)>starts in the last second<`).FindAllStringSubmatch(string(page), -1) {
			ticks[strings.Join(regexp.MustCompile(`>([^<>]*)</text>`).FindAllString(m[1], -1), " ")] = true
		}
		if len(ticks) != 1 {
			t.Errorf("%s: the origins' plots have %d different x axes, want one: %v", pass, len(ticks), ticks)
		}
	}
	// The second pass costs the site 304s or nothing: at least 95 % of its responses are fresh
	// copies or revalidated ones.
	cached, responses := 0, 0
	for _, e := range readEvents(t, filepath.Join(dir, "pass2", report.EventsFile)) {
		if e.Type == events.Response {
			responses++
			if e.Cache == cache.Fresh || e.Cache == cache.Revalidated {
				cached++
			}
		}
	}
	if responses == 0 || cached*100 < responses*95 {
		t.Errorf("the second pass answered %d of %d responses from the cache (fresh or revalidated); want at least 95 %%", cached, responses)
	}
}

// readEvents reads an events.jsonl file the demo wrote.
func readEvents(t *testing.T, name string) []events.Event {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs []events.Event
	for r := report.NewJSONLReader(f); ; {
		e, err := r.Next()
		if err == io.EOF {
			return evs
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		evs = append(evs, e)
	}
}
