package hostclock

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/kind"
)

// benchRate is the authorised per-origin rate of the benchmarks: faster than the default 3/s so
// that a run is short, slow enough that 1,000 origins stay within two cores.
const benchRate = 20

// BenchmarkAggregateRate lets two workers per origin take start slots as fast as the clock grants
// them, on the real clock, and reports the aggregate start rate achieved against the theoretical
// limit (origins × rate), the per-origin violations of "no one-second window holds more than rate
// starts", and how far each origin's schedule drifted per start (timer lateness and lock waits).
//
//	go test -run '^$' -bench AggregateRate -benchtime 4s ./politeness/hostclock/
func BenchmarkAggregateRate(b *testing.B) {
	for _, n := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("origins=%d", n), func(b *testing.B) {
			keys := make([]string, n)
			auth := make(map[string]float64, n)
			for i := range keys {
				keys[i] = fmt.Sprintf("o%d.example", i)
				auth[keys[i]] = benchRate
			}
			c, err := NewLocal(Config{Authorized: auth, Logger: quiet()})
			if err != nil {
				b.Fatal(err)
			}
			starts := make([][]time.Time, n)
			var mu = make([]sync.Mutex, n)
			var tickets atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for i := range n {
				for range 2 {
					wg.Go(func() {
						for tickets.Add(1) <= int64(b.N) {
							le, err := c.Acquire(context.Background(), keys[i], kind.HTML)
							if err != nil {
								b.Error(err)
								return
							}
							at := le.Grant().At
							le.Done(Outcome{Status: 200})
							mu[i].Lock()
							starts[i] = append(starts[i], at)
							mu[i].Unlock()
						}
					})
				}
			}
			wg.Wait()
			b.StopTimer()
			var rate, drift float64
			var measured, violations int
			interval := (&state{rate: benchRate, factor: 1}).rateInterval(&Config{})
			for _, s := range starts {
				if len(s) < 2 {
					continue
				}
				// Workers append in grant order per origin only approximately; sort.
				sortTimes(s)
				span := s[len(s)-1].Sub(s[0])
				rate += float64(len(s)-1) / span.Seconds()
				drift += (span.Seconds()/float64(len(s)-1) - interval.Seconds())
				measured++
				for j := benchRate; j < len(s); j++ {
					if s[j].Sub(s[j-benchRate]) < time.Second {
						violations++
					}
				}
			}
			if measured < n {
				return // too few starts in this round to measure every origin
			}
			b.ReportMetric(rate, "starts/s")
			b.ReportMetric(100*rate/float64(n*benchRate), "%theoretical")
			b.ReportMetric(float64(violations), "violations")
			b.ReportMetric(drift/float64(measured)*1e6, "drift-µs/start")
		})
	}
}

func sortTimes(s []time.Time) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].Before(s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// BenchmarkAcquireOverhead measures the bookkeeping of one Acquire+Done pair when nothing has to
// wait (an authorised rate of 10^9 per second, no response-time spacing: at that rate a goroutine
// preempted between Acquire and Done would space the next starts by microseconds), spread over n
// origins from parallel goroutines.
//
//	go test -run '^$' -bench AcquireOverhead ./politeness/hostclock/
func BenchmarkAcquireOverhead(b *testing.B) {
	for _, n := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("origins=%d", n), func(b *testing.B) {
			keys := make([]string, n)
			auth := make(map[string]float64, n)
			for i := range keys {
				keys[i] = fmt.Sprintf("o%d.example", i)
				auth[keys[i]] = 1e9
			}
			c, err := NewLocal(Config{Authorized: auth, Concurrency: 1 << 20, LatencyFactor: -1, Logger: quiet()})
			if err != nil {
				b.Fatal(err)
			}
			var next atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					key := keys[int(next.Add(1))%n]
					le, err := c.Acquire(context.Background(), key, kind.HTML)
					if err != nil {
						b.Error(err)
						return
					}
					le.Done(Outcome{Status: 200})
				}
			})
		})
	}
}
