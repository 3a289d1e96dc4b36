package frontier

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// benchTime is a hostclock.Time the benchmark moves by hand; its timers never fire and are not
// kept, since the benchmark never waits.
type benchTime struct {
	mu  sync.Mutex
	now time.Time
}

func (t *benchTime) Now() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.now
}

func (t *benchTime) advance(d time.Duration) {
	t.mu.Lock()
	t.now = t.now.Add(d)
	t.mu.Unlock()
}

func (t *benchTime) NewTimer(time.Duration) hostclock.Timer { return idleTimer{} }

type idleTimer struct{}

func (idleTimer) C() <-chan time.Time { return nil }
func (idleTimer) Stop() bool          { return true }

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// BenchmarkManyOrigins crawls a stream of simulated origins through the host clock and the
// frontier on injected time: one URL each, a second one for every fourth (handed out once the
// clock allows, about 367 ms later), a new origin every millisecond. It reports the heap in use
// after the crawl per origin crawled (what a forgotten origin still costs: its counters in the
// frontier's Stats and its URLs' de-duplication records), the peak heap in use (sampled every
// 50,000 origins, after a GC) and the origins the clock and the frontier still kept at the end.
// With forgetting, the peak follows the origins used within ForgetAfter (a minute: 60,000 here),
// not the origins crawled; "never" is the same crawl with forgetting off.
//
//	go test -run '^$' -bench ManyOrigins -benchtime 1x ./frontier/
func BenchmarkManyOrigins(b *testing.B) {
	for _, tt := range []struct {
		name    string
		origins int
		forget  time.Duration
	}{
		{"forget=1m/origins=1000000", 1_000_000, 0},
		{"forget=never/origins=200000", 200_000, -1},
	} {
		b.Run(tt.name, func(b *testing.B) {
			for range b.N {
				manyOrigins(b, tt.origins, tt.forget)
			}
		})
	}
}

func manyOrigins(b *testing.B, origins int, forget time.Duration) {
	quiet := slog.New(slog.DiscardHandler)
	tm := &benchTime{now: epoch}
	clock, err := hostclock.NewLocal(hostclock.Config{Time: tm, Logger: quiet, ForgetAfter: forget})
	if err != nil {
		b.Fatal(err)
	}
	f, err := New(Options{Pacer: clock, Time: tm, Logger: quiet, ForgetAfter: forget})
	if err != nil {
		b.Fatal(err)
	}
	poll, cancel := context.WithCancel(context.Background())
	cancel() // Next then hands out what may go now, and never waits
	base := heapInUse()
	peak := base
	fetched := 0
	fetch := func() {
		for {
			it, err := f.Next(poll)
			if err != nil {
				return
			}
			ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
			le, err := clock.Acquire(ctx, it.Key, kind.HTML)
			stop()
			if err != nil {
				b.Fatalf("the clock did not grant %s at once after the frontier handed it out: %v", it.URL, err)
			}
			f.Granted(it)
			le.Done(hostclock.Outcome{Status: 200})
			if err := f.Ack(it, nil); err != nil {
				b.Fatal(err)
			}
			fetched++
		}
	}
	for i := range origins {
		f.push2(b, fmt.Sprintf("https://www.site-%d.example/", i), i%4 == 0)
		fetch()
		tm.advance(time.Millisecond)
		if i%50_000 == 49_999 {
			peak = max(peak, heapInUse())
		}
	}
	for range 1000 { // the last second URLs
		tm.advance(time.Millisecond)
		fetch()
	}
	end := heapInUse()
	peak = max(peak, end)
	if want := origins + (origins+3)/4; fetched != want {
		b.Fatalf("fetched %d URLs, want %d", fetched, want)
	}
	f.mu.Lock()
	keptF := len(f.origins)
	f.mu.Unlock()
	b.ReportMetric(float64(end-base)/float64(origins), "B/origin")
	b.ReportMetric(float64(peak-base)/(1<<20), "peak-MiB")
	b.ReportMetric(float64(len(clock.Stats())), "clock-kept")
	b.ReportMetric(float64(keptF), "frontier-kept")
	runtime.KeepAlive(f)
	runtime.KeepAlive(clock)
}

// push2 pushes an origin's start page and, when second, another page of it.
func (f *Frontier) push2(b *testing.B, origin string, second bool) {
	urls := []string{origin}
	if second {
		urls = append(urls, origin+"about")
	}
	for _, u := range urls {
		if _, err := f.Push(Entry{URL: u, Depth: 1, Via: ViaStart}); err != nil {
			b.Fatal(err)
		}
	}
}
