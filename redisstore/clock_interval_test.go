package redisstore

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/redisstore/redistest"
)

// The shared clock spaces starts by exactly the rule of hostclock.Local, with the same numbers:
// the interval (the GCRA step), the window (K whole intervals from the K-th previous start) and
// the Crawl-delay floor, each read from what the production scripts write or answer, and
// compared with hostclock.Config's Interval, Window and FloorInterval. The 429 penalty is applied
// in Redis, so the rate it spaces by is known only to the script.
func TestRedisClockSpacesStartsByTheLocalClocksRule(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	type spacing struct {
		rate   float64 // configured
		factor float64 // the 429 penalty in Redis
	}
	for _, tc := range []spacing{{3, 1}, {1.5, 1}, {1, 1}, {0.5, 1}, {10, 1}, {3, 0.5}} {
		t.Run(fmt.Sprintf("%g per second, factor %g", tc.rate, tc.factor), func(t *testing.T) {
			key := fmt.Sprintf("r%g-f%g.interval.test", tc.rate, tc.factor)
			cfg := hostclock.Config{Authorized: map[string]float64{key: tc.rate, "w-" + key: tc.rate}, LatencyFactor: -1}
			c := testClock(t, srv, cfg)
			r := tc.rate * tc.factor

			// The interval: the step of the schedule after a grant (acquireScript), or after a
			// 429 that lowered the rate (doneScript's retime).
			if tc.factor == 1 {
				ln := lineOf(c, key)
				if _, err := c.ask(ctx, ln, "grant", "lease-1", false, 0, -1, -1); err != nil {
					t.Fatal(err)
				}
			} else {
				le, err := c.Acquire(ctx, key, kind.HTML)
				if err != nil {
					t.Fatal(err)
				}
				le.Done(hostclock.Outcome{Status: 429})
			}
			st := schedule(t, c, key)
			assertSame(t, "interval", time.Duration(st["tat"]-st["last"])*time.Microsecond, cfg.Interval(r))

			// The window: K = ceil(configured rate) starts all at one instant hold the next one
			// back by K intervals of the penalised rate.
			k := int(math.Ceil(tc.rate))
			after, why := peekAfterStarts(t, c, "w-"+key, k, tc.factor)
			assertSame(t, "window", after, cfg.Window(k, r))
			if why != hostclock.ReasonRate {
				t.Errorf("the window's reason is %q, want %q", why, hostclock.ReasonRate)
			}
		})
	}
	for _, delay := range []time.Duration{2 * time.Second, 30 * time.Second} {
		t.Run(fmt.Sprintf("Crawl-delay %v", delay), func(t *testing.T) {
			key := fmt.Sprintf("d%v.interval.test", delay)
			cfg := hostclock.Config{LatencyFactor: -1}
			c := testClock(t, srv, cfg)
			c.SetFloor(key, "https robots.txt", delay)
			after, why := peekAfterStarts(t, c, key, 1, 1)
			assertSame(t, "Crawl-delay spacing", after, cfg.FloorInterval(delay))
			if why != hostclock.ReasonCrawlDelay {
				t.Errorf("the floor's reason is %q, want %q", why, hostclock.ReasonCrawlDelay)
			}
		})
	}
}

// testClock returns the clock of a new store on srv configured with cfg.
func testClock(t *testing.T, srv *redistest.Server, cfg hostclock.Config) *Clock {
	t.Helper()
	cfg.Logger = slog.New(slog.DiscardHandler)
	st, err := New(srv.Client(), Options{Clock: cfg, Logger: cfg.Logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st.Clock()
}

func lineOf(c *Clock, key string) *line {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.line(key)
}

// schedule reads key's schedule hash as whole numbers.
func schedule(t *testing.T, c *Clock, key string) map[string]int64 {
	t.Helper()
	h, err := c.s.client.HGetAll(context.Background(), keysOf(key).clock).Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for f, v := range h {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("schedule field %s = %q", f, v)
		}
		out[f] = int64(x)
	}
	return out
}

// peekAfterStarts writes a schedule whose latest k starts all came at one instant t0, long past,
// with the 429 factor factor, asks acquireScript when the next start may come (peek), and
// returns how long after t0 that is, and why.
func peekAfterStarts(t *testing.T, c *Clock, key string, k int, factor float64) (time.Duration, string) {
	t.Helper()
	ctx := context.Background()
	const t0 = 1_000_000_000_000_000 // µs since 1970: in 2001
	fields := []any{"tat", t0, "last", t0, "count", k, "factor", factor}
	for i := range k {
		fields = append(fields, "r"+strconv.Itoa(i), t0)
	}
	if err := c.s.client.HSet(ctx, keysOf(key).clock, fields...).Err(); err != nil {
		t.Fatal(err)
	}
	keys, args, err := c.acquireCall(lineOf(c, key), "peek", "", false, 0, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	reply, err := acquireScript.Run(ctx, c.s.client, keys, args).Slice()
	if err != nil {
		t.Fatal(err)
	}
	if code := toInt(reply, 0); code != codePeek {
		t.Fatalf("a peek answered code %d (%v), want %d", code, reply, codePeek)
	}
	return time.Duration(toInt(reply, 2)-t0) * time.Microsecond, toString(reply, 3)
}

// assertSame checks that the script's spacing got (whole microseconds) is the local clock's want
// to the microsecond the script counts in, and never shorter than it by more than rounding.
func assertSame(t *testing.T, what string, got, want time.Duration) {
	t.Helper()
	if d := got - want; d <= -time.Microsecond || d >= time.Microsecond {
		t.Errorf("the shared clock's %s is %v, the local clock's %v", what, got, want)
	}
}
