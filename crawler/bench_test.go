package crawler

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// peakRSS returns the process's peak resident set since the last resetPeakRSS, in bytes
// (Linux: VmHWM in /proc/self/status); 0 where that cannot be read.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// resetPeakRSS starts a new peak-RSS measurement (Linux: "5" to /proc/self/clear_refs).
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// BenchmarkCrawlLinkHeavyPage crawls, through a real door, a site whose start page is 10 MB with
// 384,444 same-origin links (the page that drove a Colly crawl to 6.3 GiB in 12 s), with
// MaxPages 30, and reports the process's peak RSS during the crawl. Run it alone:
//
//	go test -run '^$' -bench CrawlLinkHeavyPage -benchtime 1x ./crawler/
func BenchmarkCrawlLinkHeavyPage(b *testing.B) {
	var page bytes.Buffer
	page.WriteString("<!doctype html><html><head><title>index</title></head><body>\n")
	for i := range 384_444 {
		fmt.Fprintf(&page, "<a href=\"/p/%06d\">x</a>\n", i)
	}
	page.WriteString("</body></html>\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case r.URL.Path == "/":
			w.Header().Set("Content-Type", "text/html")
			w.Write(page.Bytes())
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><body><a href="/">home</a></body></html>`)
		}
	}))
	defer srv.Close()
	key := strings.TrimPrefix(srv.URL, "http://")
	clock, err := hostclock.NewLocal(hostclock.Config{Authorized: map[string]float64{key: 50}, Concurrency: 4,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	door, err := politeness.NewDoor(politeness.Policy{
		Identity: identity.Identity{Profile: identity.Generic, Token: "ExampleBot", Version: "1.0",
			InfoURL: "https://example.org/bot", Contact: "bot@example.org"},
		Clock: clock, Robots: robots.NewKeeper(robots.Options{}), NoCache: true,
		Rate: 50, Concurrency: 4, AuthorizedRates: map[string]float64{key: 50}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	var peak int64
	var sum Summary
	for b.Loop() {
		// Without a Pacer the frontier's hint must know the authorised rate, or it spaces at 3/s.
		f, err := frontier.New(frontier.Options{Rate: 50, Concurrency: 4, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		resetPeakRSS()
		reported := 0
		sum, err = Run(context.Background(), Config{Client: door.Client(), Start: []string{srv.URL + "/"}, MaxPages: 30, Frontier: f,
			Logger: slog.New(slog.DiscardHandler), Report: func(Result) { reported++ }})
		if err != nil || sum.Pages != 30 || reported != sum.Pages+sum.Failed+sum.NotFetched {
			b.Fatalf("%d pages, %d reported, summary %+v, %v", sum.Pages, reported, sum, err)
		}
		peak = max(peak, peakRSS())
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(float64(sum.NotFetched), "not-fetched")
	b.ReportMetric(float64(sum.LinksOverLimit), "links-over-limit")
}
