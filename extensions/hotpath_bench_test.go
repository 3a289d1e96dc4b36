package extensions_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// BenchmarkHotPath compares the CPU a page costs through bare Colly and through Colly with the
// door (without a cache, with the memory store, with the disk store), side by side: one loopback
// origin serving 8 KB pages, sequential Visits of distinct URLs, the origin authorised at a rate
// that never makes a request wait. Each benchmark iteration is one round: 300 Visits per variant,
// the variants interleaved (each round starting with the next one) so that the machine's drift
// hits all of them alike. The CPU is the
// process's (getrusage: user + system, the test server included), per request; the reported
// figures are the medians over the rounds, and the median of each door variant's ratio to bare
// Colly in the same round. Latency pacing is off: at loopback speed it would make each request
// wait twice the previous one's response time, and the CPU of those waits is not the door's work.
// The disk store lives beside the default disk cache (see diskDir).
//
//	go test -run '^$' -bench HotPath -benchtime 30x ./extensions/
func BenchmarkHotPath(b *testing.B) {
	h := newHotPath(b)
	variants := h.variants()
	per := make([][]float64, len(variants)) // µs of CPU per request, one value per round
	// A batch leaves garbage that the next one would collect: each batch starts from a collected
	// heap and is long enough to run its own collections, and the variants take turns going first.
	const perRound = 300
	for _, v := range variants {
		h.visit(v.c) // robots.txt, connections, first allocations: not measured
	}
	b.ResetTimer()
	for round := range b.N {
		for j := range variants {
			i := (round + j) % len(variants)
			runtime.GC()
			start := cpuTime()
			for range perRound {
				h.visit(variants[i].c)
			}
			per[i] = append(per[i], float64((cpuTime()-start).Microseconds())/perRound)
		}
	}
	b.StopTimer()
	for i, v := range variants {
		b.ReportMetric(median(per[i]), v.name+"-cpu-µs/req")
		if i > 0 {
			// Paired: each round's ratio to bare Colly in the same round, so drift between rounds cancels.
			ratios := make([]float64, len(per[i]))
			for r := range per[i] {
				ratios[r] = per[i][r] / per[0][r]
			}
			b.ReportMetric(median(ratios), v.name+"/bare")
		}
	}
	b.ReportMetric(0, "ns/op") // a round's wall time says nothing here
}

// BenchmarkVisit is one variant of BenchmarkHotPath at a time, one Visit per op: the one to
// profile (go test -run '^$' -bench 'Visit/door$' -cpuprofile cpu.out ./extensions/).
func BenchmarkVisit(b *testing.B) {
	h := newHotPath(b)
	for _, v := range h.variants() {
		b.Run(v.name, func(b *testing.B) {
			h.visit(v.c)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				h.visit(v.c)
			}
		})
	}
}

// hotPath is the site and the collectors BenchmarkHotPath and BenchmarkVisit compare.
type hotPath struct {
	b   *testing.B
	srv *httptest.Server
	n   int
}

func newHotPath(b *testing.B) *hotPath {
	page := "<html><body>" + strings.Repeat("x", 8<<10-len("<html><body></body></html>")) + "</body></html>"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page)
	}))
	b.Cleanup(srv.Close)
	return &hotPath{b: b, srv: srv}
}

type variant struct {
	name string
	c    *colly.Collector
}

// variants returns bare Colly, then Colly with the door without a cache, with the memory store and
// with the disk store.
func (h *hotPath) variants() []variant {
	polite := func(store cache.Store) *colly.Collector {
		c := colly.NewCollector()
		if err := extensions.Polite(c, fastPolicy(h.b, h.srv, store)); err != nil {
			h.b.Fatal(err)
		}
		return c
	}
	disk, err := cache.NewDiskStore(h.diskDir(), cache.DiskOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		h.b.Fatal(err)
	}
	return []variant{
		{"bare", colly.NewCollector()},
		{"door", polite(nil)},
		{"door+memory", polite(cache.NewMemoryStore(0))},
		{"door+disk", polite(disk)},
	}
}

// diskDir returns an empty directory, removed when the benchmark ends, beside the default disk
// cache (cache.DefaultDir): the disk store's cost depends on the file system, so it is measured
// where a crawl keeps its records. $ETIQUETTE_BENCH_DISK names another parent directory.
func (h *hotPath) diskDir() string {
	parent := os.Getenv("ETIQUETTE_BENCH_DISK")
	if parent == "" {
		def, err := cache.DefaultDir()
		if err != nil {
			return h.b.TempDir()
		}
		parent = filepath.Dir(def)
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		h.b.Fatal(err)
	}
	dir, err := os.MkdirTemp(parent, "bench-")
	if err != nil {
		h.b.Fatal(err)
	}
	h.b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// visit fetches a page not fetched before, so that every cached variant misses and stores.
func (h *hotPath) visit(c *colly.Collector) {
	h.n++
	if err := c.Visit(fmt.Sprintf("%s/page/%d", h.srv.URL, h.n)); err != nil {
		h.b.Fatal(err)
	}
}

// cpuTime is the CPU the process used so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// fastPolicy is a policy with its own clock, authorised at a rate for srv that never makes a
// request wait, and its own robots.txt keeper; store nil means no cache.
func fastPolicy(tb testing.TB, srv *httptest.Server, store cache.Store) politeness.Policy {
	tb.Helper()
	return fastPolicyAt(tb, srv.Listener.Addr().String(), store)
}

// fastPolicyAt is fastPolicy for the origin at addr (host:port), e.g. an etiquettetest origin.
func fastPolicyAt(tb testing.TB, addr string, store cache.Store) politeness.Policy {
	tb.Helper()
	quiet := slog.New(slog.DiscardHandler)
	clock, err := hostclock.NewLocal(hostclock.Config{Authorized: map[string]float64{addr: 1e6}, LatencyFactor: -1, Logger: quiet})
	if err != nil {
		tb.Fatal(err)
	}
	return politeness.Policy{
		Identity: identity.Identity{Profile: identity.Generic, Token: "ExampleBot", Version: "1.0", InfoURL: "https://example.org/bot", Contact: "bot@example.org"},
		Clock:    clock, Robots: robots.NewKeeper(robots.Options{}), Logger: quiet,
		CacheStore: store, NoCache: store == nil,
	}
}
