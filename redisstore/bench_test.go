package redisstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/etiquette/frontier"
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

// benchRedis are the two shapes of Redis the benchmarks compare: one server, and a cluster of
// three masters on the same machine.
func benchRedis(b *testing.B) []struct {
	name   string
	client func() redis.UniversalClient
} {
	srv := redistest.Start(b)
	cl := redistest.StartCluster(b)
	return []struct {
		name   string
		client func() redis.UniversalClient
	}{
		{"redis=one", func() redis.UniversalClient { return srv.Client() }},
		{"redis=cluster3", func() redis.UniversalClient { return cl.Client() }},
	}
}

// BenchmarkReservations takes start slots from 8 goroutines of one process against a local Redis,
// as fast as the clock grants them, and reports the reservations (Acquire, then Done) per second,
// and the median and 99th percentile of one reservation. With one origin the process's line for
// it lets the first two requests ask Redis side by side while grants flow; with one origin per
// goroutine all of them ask side by side (on a cluster, at the nodes that hold their slots).
//
//	go test -run '^$' -bench Reservations -benchtime 3s ./redisstore/
func BenchmarkReservations(b *testing.B) {
	for _, r := range benchRedis(b) {
		for _, origins := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/origins=%d", r.name, origins), func(b *testing.B) {
				benchReservations(b, r.client(), origins)
			})
		}
	}
}

func benchReservations(b *testing.B, client redis.UniversalClient, origins int) {
	keys := benchKeys(origins)
	st, err := redisstore.New(client, redisstore.Options{Clock: unlimited(keys), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := st.Check(context.Background()); err != nil {
		b.Fatal(err)
	}
	c := st.Clock()
	var next atomic.Int64
	var mu sync.Mutex
	var took []time.Duration
	b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0))) // RunParallel starts GOMAXPROCS × this goroutines
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		key := keys[int(next.Add(1))%len(keys)]
		var mine []time.Duration
		for pb.Next() {
			t0 := time.Now()
			le, err := c.Acquire(context.Background(), key, kind.HTML)
			if err != nil {
				b.Error(err)
				return
			}
			le.Done(hostclock.Outcome{Status: 200})
			mine = append(mine, time.Since(t0))
		}
		mu.Lock()
		took = append(took, mine...)
		mu.Unlock()
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "reservations/s")
	if len(took) > 0 {
		slices.Sort(took)
		b.ReportMetric(float64(took[len(took)/2])/1e3, "p50-µs")
		b.ReportMetric(float64(took[len(took)*99/100])/1e3, "p99-µs")
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

// BenchmarkFootprint measures what the crawl keeps in Redis: the keys and bytes (MEMORY USAGE,
// summed over every key) of one origin the clock has granted a start to and whose queue holds
// one URL, and the bytes each further queued URL adds (its entry in the queue and its hash in the
// seen set).
//
//	go test -run '^$' -bench Footprint -benchtime 1x ./redisstore/
func BenchmarkFootprint(b *testing.B) {
	const origins, urls = 200, 5000
	srv := redistest.Start(b)
	ctx := context.Background()
	admin := srv.Client()
	keys := benchKeys(origins)
	usage := func() (n int, bytes int64) {
		iter := admin.Scan(ctx, 0, "*", 1000).Iterator()
		for iter.Next(ctx) {
			n++
			bytes += admin.MemoryUsage(ctx, iter.Val(), 0).Val()
		}
		return n, bytes
	}
	for b.Loop() {
		if err := admin.FlushAll(ctx).Err(); err != nil {
			b.Fatal(err)
		}
		st, err := redisstore.New(srv.Client(), redisstore.Options{Clock: unlimited(keys), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		q := st.Queue()
		if err := q.Init(); err != nil {
			b.Fatal(err)
		}
		n0, bytes0 := usage()
		for _, k := range keys {
			le, err := st.Clock().Acquire(ctx, k, kind.HTML)
			if err != nil {
				b.Fatal(err)
			}
			le.Sent()
			le.Done(hostclock.Outcome{Status: 200})
			if _, err := q.AddRequest(k, frontier.Entry{URL: "https://" + k + "/", Depth: 1, Via: frontier.ViaStart}, 0); err != nil {
				b.Fatal(err)
			}
		}
		n1, bytes1 := usage()
		b.ReportMetric(float64(n1-n0)/origins, "keys/origin")
		b.ReportMetric(float64(bytes1-bytes0)/origins, "bytes/origin")
		for i := range urls {
			u := fmt.Sprintf("https://%s/articles/2026/12/%s-%d.html", keys[0], strings.Repeat("x", 20), i)
			if _, err := q.AddRequest(keys[0], frontier.Entry{URL: u, Depth: 2, Via: frontier.ViaLink}, 0); err != nil {
				b.Fatal(err)
			}
		}
		_, bytes2 := usage()
		b.ReportMetric(float64(bytes2-bytes1)/urls, "bytes/URL")
		st.Close()
	}
}
