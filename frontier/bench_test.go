package frontier

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// realisticURLs returns n distinct URLs shaped like a news or shop site's: a host, a section, a
// date and a slug of a few words, sometimes a query — 70 to 100 bytes, over 10 origins. In page
// order they come as a crawler pushes them, page by page: the 40 links of a page share an origin,
// a section and a year; otherwise every URL draws its parts afresh.
func realisticURLs(n int, pageOrder bool) []string {
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("climate market city council report season final review guide travel " +
		"energy school health music film science sports local world business opinion update")
	sections := []string{"news", "politics", "culture", "products", "blog", "events"}
	out := make([]string, n)
	site, section, year := 0, "", 0
	for i := range out {
		if !pageOrder || i%40 == 0 {
			site, section, year = r.IntN(10), sections[r.IntN(len(sections))], 2015+r.IntN(11)
		}
		var slug []string
		for range 3 + r.IntN(4) {
			slug = append(slug, words[r.IntN(len(words))])
		}
		u := fmt.Sprintf("https://www.site-%d.example/%s/%d/%02d/%s-%d", site, section, year, 1+r.IntN(12),
			strings.Join(slug, "-"), i)
		if r.IntN(4) == 0 {
			u += fmt.Sprintf("?page=%d", r.IntN(20))
		}
		out[i] = u
	}
	return out
}

// BenchmarkQueuedURLMemory measures what a queued URL costs: the heap a frontier holds after n
// pushes (queue and de-duplication record), divided by n.
func BenchmarkQueuedURLMemory(b *testing.B) {
	for _, c := range []struct {
		n         int
		pageOrder bool
	}{{100_000, false}, {1_000_000, false}, {100_000, true}, {1_000_000, true}} {
		order := "random"
		if c.pageOrder {
			order = "page-order"
		}
		n := c.n
		b.Run(fmt.Sprintf("%s/%d", order, n), func(b *testing.B) {
			urls := realisticURLs(n, c.pageOrder)
			total := 0
			for _, u := range urls {
				total += len(u)
			}
			var perURL float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				f, err := New(Options{MaxQueued: n, Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					b.Fatal(err)
				}
				for _, u := range urls {
					if _, err := f.Push(Entry{URL: u, Depth: 2, Via: ViaLink}); err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				perURL = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
				runtime.KeepAlive(f)
			}
			b.ReportMetric(perURL, "B/URL")
			b.ReportMetric(float64(total)/float64(n), "URL-length")
		})
	}
}

// BenchmarkPushNext measures one URL's way through the frontier: Push, Next, Granted, Ack.
func BenchmarkPushNext(b *testing.B) {
	urls := realisticURLs(100_000, true)
	f, err := New(Options{MaxQueued: len(urls), Rate: 1e9, Concurrency: 1 << 20, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	i := 0
	for b.Loop() {
		f.Push(Entry{URL: urls[i%len(urls)] + fmt.Sprint("x", i), Depth: 2, Via: ViaLink})
		it, err := f.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		f.Granted(it)
		f.Ack(it, nil)
		i++
	}
}
