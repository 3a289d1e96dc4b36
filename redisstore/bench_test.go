package redisstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/redisstore"
	"github.com/politecrawl/etiquette/redisstore/redistest"
)

// unlimited is a clock configuration under which nothing waits: every origin authorised at 10⁹
// starts per second, a million in flight, no response-time spacing. What is measured is the
// clock's own cost: one acquire script (and one done script) per request.
func unlimited(keys []string) hostclock.Config {
	auth := make(map[string]float64, len(keys))
	for _, k := range keys {
		auth[k] = 1e9
	}
	return hostclock.Config{Authorized: auth, Concurrency: 1 << 20, LatencyFactor: -1, Logger: slog.New(slog.DiscardHandler)}
}

func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("o%d.bench", i)
	}
	return keys
}

// BenchmarkReservations takes start slots from 8 goroutines of one process against a local Redis,
// as fast as the clock grants them, and reports the reservations (Acquire, then Done) per second.
// With one origin the process's line for it lets the first two requests ask Redis side by side
// while grants flow; with one origin per goroutine all of them ask side by side.
//
//	go test -run '^$' -bench Reservations -benchtime 3s ./redisstore/
func BenchmarkReservations(b *testing.B) {
	srv := redistest.Start(b)
	for _, origins := range []int{1, 8} {
		b.Run(fmt.Sprintf("origins=%d", origins), func(b *testing.B) {
			keys := benchKeys(origins)
			st, err := redisstore.New(srv.Client(), redisstore.Options{Clock: unlimited(keys), Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			c := st.Clock()
			var next atomic.Int64
			b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0))) // RunParallel starts GOMAXPROCS × this goroutines
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				key := keys[int(next.Add(1))%len(keys)]
				for pb.Next() {
					le, err := c.Acquire(context.Background(), key, kind.HTML)
					if err != nil {
						b.Error(err)
						return
					}
					le.Done(hostclock.Outcome{Status: 200})
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "reservations/s")
		})
	}
}

// BenchmarkLatencyPerRequest measures what the shared clock adds to one request that does not
// wait — Acquire, Sent and Done, three round trips to a local Redis — against hostclock.Local, and
// reports the median and the 99th percentile.
//
//	go test -run '^$' -bench LatencyPerRequest -benchtime 5000x ./redisstore/
func BenchmarkLatencyPerRequest(b *testing.B) {
	srv := redistest.Start(b)
	keys := benchKeys(1)
	local, err := hostclock.NewLocal(unlimited(keys))
	if err != nil {
		b.Fatal(err)
	}
	st, err := redisstore.New(srv.Client(), redisstore.Options{Clock: unlimited(keys), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for _, tc := range []struct {
		name  string
		clock hostclock.Clock
	}{{"local", local}, {"redis", st.Clock()}} {
		b.Run(tc.name, func(b *testing.B) {
			took := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				le, err := tc.clock.Acquire(context.Background(), keys[0], kind.HTML)
				if err != nil {
					b.Fatal(err)
				}
				le.Sent()
				le.Done(hostclock.Outcome{Status: 200})
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2])/1e3, "p50-µs")
			b.ReportMetric(float64(took[len(took)*99/100])/1e3, "p99-µs")
		})
	}
}
