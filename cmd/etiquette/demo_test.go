package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/politecrawl/etiquette/report"
)

// originRequests reads "host:port" → the requests figure from the text report of one pass.
func originRequests(t *testing.T, text string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, block := range regexp.MustCompile(`(?m)^(127\.0\.0\.1:\d+)\n  requests +(\d+)`).FindAllStringSubmatch(text, -1) {
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
	reqs := originRequests(t, out)
	if len(reqs) != 4 {
		t.Fatalf("report shows %d origins with a requests line, want 4:\n%s", len(reqs), out)
	}
	for origin, n := range reqs {
		if n == "0" {
			t.Errorf("report shows no requests to %s:\n%s", origin, out)
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
		html, err := os.ReadFile(filepath.Join(dir, pass, report.HTMLFile))
		if err != nil {
			t.Fatalf("demo --report: %v", err)
		}
		if !strings.Contains(string(html), "<svg") {
			t.Errorf("%s/%s draws no timeline (no <svg)", pass, report.HTMLFile)
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
}
