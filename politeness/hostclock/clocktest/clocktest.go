// Package clocktest is the behaviour table every [hostclock.Clock] must pass, in real time: the
// in-process hostclock.Local and a clock shared through a store (redisstore) run the same cases,
// so the two cannot drift apart. Local keeps its exact, injected-time tests besides.
//
// The cases run on the wall clock with short intervals — each origin authorised at [Rate] starts
// per second, 57 ms apart ([hostclock.Config.Interval]) — and assert bounds that hold on a loaded two-core machine: a start is
// never earlier than the rules allow (less [Slack], the jitter between the clock's reading of the
// time and the test's), and comes within a generous bound after that.
package clocktest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/backoff"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// Rate is the authorised start rate of every case's origin, per second.
const Rate = 20

// Slack is how much earlier than the rule a start may appear to the test: a grant time is read
// by the clock (a store's clock may be another process's) and reported back through a goroutine
// the machine may schedule late.
const Slack = 25 * time.Millisecond

// late bounds how much later than the rule allows a start may come on a loaded machine.
const late = time.Second

// interval is the spacing of Rate with the default margins: every clock spaces its starts by
// [hostclock.Config.Interval].
var interval = hostclock.Config{}.Interval(Rate)

// Factory returns a new clock built from cfg for one case. It fails t when cfg is refused.
// Cases use origins no other case uses, so a factory may return clocks that share a store.
type Factory func(t *testing.T, cfg hostclock.Config) hostclock.Clock

// Run runs every case against the clocks newClock builds.
func Run(t *testing.T, newClock Factory) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			key := fmt.Sprintf("c%d.clocktest", rand.Uint64())
			cfg := hostclock.Config{
				Authorized:    map[string]float64{key: Rate},
				LatencyFactor: -1, // the cases time their own responses; only the latency case turns it on
				Logger:        slog.New(slog.DiscardHandler),
			}
			c.run(t, newClock, cfg, key)
		})
	}
}

type testCase struct {
	name string
	run  func(t *testing.T, newClock Factory, cfg hostclock.Config, key string)
}

var cases = []testCase{
	{"starts are spaced by the rate's interval, without an initial burst", func(t *testing.T, newClock Factory, cfg hostclock.Config, key string) {
		c := newClock(t, cfg)
		var at []time.Time
		for range 6 {
			le := acquire(t, c, key, kind.HTML)
			at = append(at, le.Grant().At)
			le.Done(hostclock.Outcome{Status: 200})
		}
		for i := 1; i < len(at); i++ {
			if gap := at[i].Sub(at[i-1]); gap < interval/2-Slack {
				t.Errorf("start %d came %v after the one before; the clock never spaces two starts by less than half an interval (%v)", i, gap, interval/2)
			}
		}
		span := at[len(at)-1].Sub(at[0])
		if want := 5 * interval; span < want-Slack || span > want+late {
			t.Errorf("6 starts spanned %v, want %v (5 intervals)", span, want)
		}
	}},
	{"no one-second window holds more than the rate, however many ask at once", func(t *testing.T, newClock Factory, cfg hostclock.Config, key string) {
		c := newClock(t, cfg)
		grants := make(chan time.Time, 100)
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		defer cancel()
		done := make(chan struct{})
		for range 8 {
			go func() {
				defer func() { done <- struct{}{} }()
				for {
					le, err := c.Acquire(ctx, key, kind.HTML)
					if err != nil {
						return
					}
					grants <- le.Grant().At
					le.Done(hostclock.Outcome{Status: 200})
				}
			}()
		}
		for range 8 {
			<-done
		}
		close(grants)
		var at []time.Time
		for g := range grants {
			at = append(at, g)
		}
		slices.SortFunc(at, time.Time.Compare)
		// Rate+1 consecutive starts span at least 1 s + the jitter margin, so that a delay of
		// up to that margin on the way to the server never puts Rate+1 in one second of its log.
		for j := Rate; j < len(at); j++ {
			if w := at[j].Sub(at[j-Rate]); w < time.Second+hostclock.DefaultJitterMargin-Slack {
				t.Errorf("starts %d to %d (%d starts) fell within %v, want at least 1 s + the jitter margin of %v",
					j-Rate, j, Rate+1, w, hostclock.DefaultJitterMargin)
			}
		}
		if len(at) < Rate {
			t.Errorf("8 goroutines got %d starts in 1.5 s at %d per second", len(at), Rate)
		}
	}},
	{"at most Concurrency requests hold a place; the next starts when one is done", func(t *testing.T, newClock Factory, cfg hostclock.Config, key string) {
		cfg.Concurrency = 2
		c := newClock(t, cfg)
		a := acquire(t, c, key, kind.HTML)
		b := acquire(t, c, key, kind.HTML)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		if le, err := c.Acquire(ctx, key, kind.HTML); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a third request with two in flight: %v, %v; want it to wait until its deadline", le, err)
		}
		got := make(chan hostclock.Lease, 1)
		go func() { got <- acquireFrom(t, c, key, kind.HTML) }()
		doneAt := time.Now()
		b.Done(hostclock.Outcome{Status: 200})
		le := <-got
		if le == nil {
			return
		}
		if d := le.Grant().At.Sub(doneAt); d > late {
			t.Errorf("the waiting request started %v after a place was freed", d)
		}
		a.Done(hostclock.Outcome{Status: 200})
		le.Done(hostclock.Outcome{Status: 200})
	}},
	{"robots.txt goes ahead of the pages waiting for the origin", func(t *testing.T, newClock Factory, cfg hostclock.Config, key string) {
		c := newClock(t, cfg)
		c.Pause(key, time.Now().Add(400*time.Millisecond), "test")
		order := make(chan kind.Kind, 3)
		take := func(k kind.Kind, asking chan<- struct{}) {
			close(asking)
			le := acquireFrom(t, c, key, k)
			order <- k
			if le != nil {
				le.Done(hostclock.Outcome{Status: 200})
			}
		}
		for range 2 {
			asking := make(chan struct{})
			go take(kind.HTML, asking)
			<-asking
		}
		asking := make(chan struct{})
		go take(kind.Robots, asking)
		<-asking
		if first := <-order; first != kind.Robots {
			t.Errorf("the first start after the pause went to %s, want robots.txt", first)
		}
		<-order
		<-order
	}},
	{"a pause holds every start until it ends", func(t *testing.T, newClock Factory, cfg hostclock.Config, key string) {
		c := newClock(t, cfg)
		until := time.Now().Add(300 * time.Millisecond)
		c.Pause(key, until, "maintenance")
		c.Pause(key, until.Add(-200*time.Millisecond), "shorter") // never shortens
		got, why, err := c.PausedUntil(key)
		if err != nil || why != "maintenance" || got.Sub(until).Abs() > Slack {
			t.Errorf("PausedUntil = %v, %q, %v; want %v, maintenance", got, why, err, until)
		}
		if e, err := c.Earliest(key); err != nil || e.Before(until.Add(-Slack)) {
			t.Errorf("Earliest = %v, %v; want the pause's end %v", e, err, until)
		}
		le := acquire(t, c, key, kind.HTML)
		if g := le.Grant(); g.At.Before(until.Add(-Slack)) || g.At.After(until.Add(late)) || g.Reason != "maintenance" {
			t.Errorf("granted at %v (%s), want at the pause's end %v for maintenance", g.At, g.Reason, until)
		}
		le.Done(hostclock.Outcome{Status: 200})
	}},
	{"a 429 with Retry-After pauses the origin for that long and halves its rate", func(t *testing.T, newClock Factory, cfg hostclock.Config, key string) {
		c := newClock(t, cfg)
		le := acquire(t, c, key, kind.HTML)
		le.Done(hostclock.Outcome{Status: 429, RetryAfter: 400 * time.Millisecond})
		end := time.Now().Add(400 * time.Millisecond)
		p, ok := le.Caused()
		if !ok || p.Reason != hostclock.ReasonRetryAfter || p.Until.Sub(end).Abs() > Slack+50*time.Millisecond {
			t.Fatalf("Caused = %+v, %v; want a retry-after pause until about %v", p, ok, end)
		}
		first := acquire(t, c, key, kind.HTML)
		if g := first.Grant(); g.At.Before(p.Until.Add(-Slack)) || g.Reason != hostclock.ReasonRetryAfter {
			t.Errorf("next start at %v (%s), want after the pause's end %v", g.At, g.Reason, p.Until)
		}
		first.Done(hostclock.Outcome{Status: 200})
		second := acquire(t, c, key, kind.HTML)
		if gap, want := second.Grant().At.Sub(first.Grant().At), (hostclock.Config{}).Interval(Rate/2); gap < want-Slack {
			t.Errorf("after the 429 starts came %v apart, want half the rate's interval: %v", gap, want)
		}
		second.Done(hostclock.Outcome{Status: 200})
		st := stats(t, c, key)
		if st.Rate != Rate/2 || st.TooManyRequests != 1 || st.Pauses != 1 {
			t.Errorf("Stats: rate %g, 429s %d, pauses %d; want %d, 1, 1", st.Rate, st.TooManyRequests, st.Pauses, Rate/2)
		}
	}},
	{"a 503 without Retry-After backs off by the policy and keeps the rate", func(t *testing.T, newClock Factory, cfg hostclock.Config, key string) {
		cfg.Backoff = func(cl backoff.Class, n int, _ func() float64) time.Duration {
			if cl != backoff.Throttled {
				t.Errorf("a 503 was classed %v", cl)
			}
			return time.Duration(n) * 200 * time.Millisecond
		}
		c := newClock(t, cfg)
		le := acquire(t, c, key, kind.HTML)
		le.Done(hostclock.Outcome{Status: 503})
		if p, ok := le.Caused(); !ok || p.Reason != hostclock.ReasonBackoff {
			t.Fatalf("Caused = %+v, %v; want a backoff pause", p, ok)
		}
		next := acquire(t, c, key, kind.HTML)
		if gap := next.Grant().At.Sub(le.Grant().At); gap < 200*time.Millisecond-Slack {
			t.Errorf("the next start came %v after the 503, want the first backoff step of 200 ms", gap)
		}
		next.Done(hostclock.Outcome{Status: 503}) // the second failure in a row: twice as long
		if p, ok := next.Caused(); !ok || p.Until.Sub(next.Grant().At) < 400*time.Millisecond-Slack {
			t.Errorf("second 503: Caused = %+v, %v; want a pause of 400 ms", p, ok)
		}
		if st := stats(t, c, key); st.Rate != Rate || st.Unavailable != 2 {
			t.Errorf("Stats: rate %g, 503s %d; want %d, 2", st.Rate, st.Unavailable, Rate)
		}
	}},
	{"a run of successes after a 429 steps the rate up by a quarter", func(t *testing.T, newClock Factory, cfg hostclock.Config, key string) {
		cfg.RecoverAfter = 2
		c := newClock(t, cfg)
		acquire(t, c, key, kind.HTML).Done(hostclock.Outcome{Status: 429, RetryAfter: time.Millisecond})
		if st := stats(t, c, key); st.Rate != Rate/2 {
			t.Fatalf("after a 429 the rate is %g, want %d", st.Rate, Rate/2)
		}
		acquire(t, c, key, kind.HTML).Done(hostclock.Outcome{Status: 200})
		if st := stats(t, c, key); st.Rate != Rate/2 {
			t.Fatalf("after one success the rate is %g, want still %d", st.Rate, Rate/2)
		}
		acquire(t, c, key, kind.HTML).Done(hostclock.Outcome{Status: 200})
		if st := stats(t, c, key); st.Rate != Rate/2*1.25 {
			t.Errorf("after a run of 2 successes the rate is %g, want %g", st.Rate, Rate/2*1.25)
		}
	}},
	{"a spent error budget gives the origin up for the crawl", func(t *testing.T, newClock Factory, cfg hostclock.Config, key string) {
		cfg.ErrorBudget = 2
		cfg.Backoff = func(backoff.Class, int, func() float64) time.Duration { return 10 * time.Millisecond }
		c := newClock(t, cfg)
		acquire(t, c, key, kind.HTML).Done(hostclock.Outcome{Status: 500})
		le := acquire(t, c, key, kind.HTML)
		le.Done(hostclock.Outcome{Err: errors.New("connection refused")})
		if p, ok := le.Caused(); !ok || p.Reason != hostclock.ReasonGiveUp {
			t.Errorf("the failure that spent the budget: Caused = %+v, %v; want give-up", p, ok)
		}
		assertGivenUp(t, c, key)
		if st := stats(t, c, key); st.GiveUps != 1 || st.ServerErrors != 1 || st.TransportErrors != 1 || st.Refused == 0 {
			t.Errorf("Stats = %+v; want 1 give-up, 1 server error, 1 transport error, refusals counted", st)
		}
	}},
	{"a Retry-After beyond the ceiling gives the origin up at once", func(t *testing.T, newClock Factory, cfg hostclock.Config, key string) {
		cfg.MaxRetryAfter = time.Second
		c := newClock(t, cfg)
		acquire(t, c, key, kind.HTML).Done(hostclock.Outcome{Status: 503, RetryAfter: 2 * time.Second})
		assertGivenUp(t, c, key)
	}},
	{"a request the caller cancelled teaches nothing", func(t *testing.T, newClock Factory, cfg hostclock.Config, key string) {
		c := newClock(t, cfg)
		le := acquire(t, c, key, kind.HTML)
		le.Done(hostclock.Outcome{Err: context.Canceled})
		if p, ok := le.Caused(); ok {
			t.Errorf("a cancelled request paused the origin: %+v", p)
		}
		if until, _, err := c.PausedUntil(key); err != nil || !until.IsZero() {
			t.Errorf("PausedUntil = %v, %v; want no pause", until, err)
		}
	}},
	{"a second Done counts nothing", func(t *testing.T, newClock Factory, cfg hostclock.Config, key string) {
		c := newClock(t, cfg)
		le := acquire(t, c, key, kind.HTML)
		le.Done(hostclock.Outcome{Status: 429, RetryAfter: time.Millisecond})
		le.Done(hostclock.Outcome{Status: 429, RetryAfter: time.Millisecond})
		if st := stats(t, c, key); st.TooManyRequests != 1 || st.Rate != Rate/2 {
			t.Errorf("Stats: 429s %d, rate %g; want 1 and %d", st.TooManyRequests, st.Rate, Rate/2)
		}
	}},
	{"the Crawl-delay floor is the largest of every source's, capped, and can be withdrawn", func(t *testing.T, newClock Factory, cfg hostclock.Config, key string) {
		cfg.MaxFloor = 400 * time.Millisecond
		c := newClock(t, cfg)
		c.SetFloor(key, "http robots.txt", 150*time.Millisecond)
		c.SetFloor(key, "https robots.txt", 250*time.Millisecond)
		c.SetFloor(key, "https robots.txt", 250*time.Millisecond) // repeating changes nothing
		gapAtLeast(t, c, key, cfg.FloorInterval(250*time.Millisecond), hostclock.ReasonCrawlDelay)
		if st := stats(t, c, key); st.Floor != 250*time.Millisecond {
			t.Errorf("Stats.Floor = %v, want the largest source's 250ms", st.Floor)
		}
		c.SetFloor(key, "https robots.txt", 0) // that robots.txt dropped its Crawl-delay
		if st := stats(t, c, key); st.Floor != 150*time.Millisecond {
			t.Errorf("after withdrawing one source Stats.Floor = %v, want 150ms", st.Floor)
		}
		c.SetFloor(key, "greedy robots.txt", time.Hour)
		if st := stats(t, c, key); st.Floor != cfg.MaxFloor {
			t.Errorf("with a Crawl-delay of an hour Stats.Floor = %v, want the cap %v", st.Floor, cfg.MaxFloor)
		}
		gapAtLeast(t, c, key, cfg.FloorInterval(cfg.MaxFloor), hostclock.ReasonCrawlDelay)
	}},
	{"Earliest tells when the next start could be, and reserves nothing", func(t *testing.T, newClock Factory, cfg hostclock.Config, key string) {
		c := newClock(t, cfg)
		if e, err := c.Earliest(key); err != nil || e.After(time.Now()) {
			t.Errorf("Earliest of an origin never asked = %v, %v; want at once (not after now)", e, err)
		}
		le := acquire(t, c, key, kind.HTML)
		le.Done(hostclock.Outcome{Status: 200})
		e1, err1 := c.Earliest(key)
		e2, err2 := c.Earliest(key)
		if err1 != nil || err2 != nil || e2.Sub(e1).Abs() > Slack {
			t.Errorf("asking twice moved Earliest from %v to %v (%v, %v)", e1, e2, err1, err2)
		}
		if want := le.Grant().At.Add(interval); e1.Before(want.Add(-Slack)) {
			t.Errorf("Earliest after a start = %v, want one interval later: %v", e1, want)
		}
		next := acquire(t, c, key, kind.HTML)
		if g := next.Grant().At; g.Before(e1.Add(-Slack)) || g.After(e1.Add(late)) {
			t.Errorf("the next start came at %v, Earliest said %v", g, e1)
		}
		next.Done(hostclock.Outcome{Status: 200})
	}},
	{"a request whose deadline comes before the earliest start is refused at once", func(t *testing.T, newClock Factory, cfg hostclock.Config, key string) {
		c := newClock(t, cfg)
		until := time.Now().Add(2 * time.Second)
		c.Pause(key, until, "maintenance")
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		_, err := c.Acquire(ctx, key, kind.HTML)
		var tl *hostclock.WaitTooLongError
		if !errors.As(err, &tl) || !errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			t.Fatalf("Acquire = %v (context: %v); want a *WaitTooLongError before the deadline", err, ctx.Err())
		}
		if tl.Origin != key || tl.Reason != "maintenance" || tl.Earliest.Sub(until).Abs() > Slack {
			t.Errorf("WaitTooLongError = %+v; want origin %s, maintenance, earliest %v", tl, key, until)
		}
		if st := stats(t, c, key); st.TooLong != 1 || st.Requests != 0 {
			t.Errorf("Stats: too long %d, requests %d; want 1 refusal and nothing reserved", st.TooLong, st.Requests)
		}
	}},
	{"a request sent late pushes the next start back", func(t *testing.T, newClock Factory, cfg hostclock.Config, key string) {
		c := newClock(t, cfg)
		le := acquire(t, c, key, kind.HTML)
		<-time.After(3 * interval) // the request takes this long to reach the server
		sent := time.Now()
		le.Sent()
		le.Done(hostclock.Outcome{Status: 200})
		next := acquire(t, c, key, kind.HTML)
		if gap := next.Grant().At.Sub(sent); gap < interval/2-Slack {
			t.Errorf("the next start came %v after the previous request was sent, want at least half an interval (%v)", gap, interval/2)
		}
		next.Done(hostclock.Outcome{Status: 200})
	}},
	{"a slow origin is asked less often, and gets its budget back when it is fast again", func(t *testing.T, newClock Factory, cfg hostclock.Config, key string) {
		cfg.LatencyFactor = 2
		c := newClock(t, cfg)
		le := acquire(t, c, key, kind.HTML)
		le.Sent()
		<-time.After(150 * time.Millisecond) // the server takes this long to answer
		le.Done(hostclock.Outcome{Status: 200})
		p, ok := le.Paced()
		if !ok || !p.Slowed || p.ResponseTime < 150*time.Millisecond || p.Interval < margin(300*time.Millisecond) {
			t.Fatalf("Paced = %+v, %v; want slowed to twice a response time of 150 ms", p, ok)
		}
		next := acquire(t, c, key, kind.HTML)
		if g := next.Grant(); g.At.Sub(le.Grant().At) < margin(300*time.Millisecond)-Slack || g.Reason != hostclock.ReasonLatency {
			t.Errorf("after a 150 ms answer the next start came %v later (%s), want 2 × 150 ms (latency)", g.At.Sub(le.Grant().At), g.Reason)
		}
		next.Done(hostclock.Outcome{Status: 200})
		for range 8 {
			le := acquire(t, c, key, kind.HTML)
			le.Done(hostclock.Outcome{Status: 200})
			if p, ok := le.Paced(); ok && !p.Slowed {
				if st := stats(t, c, key); st.Slowdowns != 1 {
					t.Errorf("Stats.Slowdowns = %d, want 1", st.Slowdowns)
				}
				return
			}
		}
		t.Errorf("eight fast answers did not give the origin its budget back")
	}},
	{"a waiting request whose context ends leaves the line", func(t *testing.T, newClock Factory, cfg hostclock.Config, key string) {
		c := newClock(t, cfg)
		until := time.Now().Add(300 * time.Millisecond)
		c.Pause(key, until, "test")
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan error, 1)
		go func() {
			_, err := c.Acquire(ctx, key, kind.HTML)
			got <- err
		}()
		cancel()
		if err := <-got; !errors.Is(err, context.Canceled) {
			t.Fatalf("Acquire after cancel = %v, want context.Canceled", err)
		}
		le := acquire(t, c, key, kind.HTML)
		if g := le.Grant(); g.At.After(until.Add(late)) {
			t.Errorf("the next request waited until %v, want the pause's end %v", g.At, until)
		}
		le.Done(hostclock.Outcome{Status: 200})
	}},
}

// acquire takes a start slot to key within ten seconds.
func acquire(t *testing.T, c hostclock.Clock, key string, k kind.Kind) hostclock.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	le, err := c.Acquire(ctx, key, k)
	if err != nil {
		t.Fatalf("Acquire(%s, %s): %v", key, k, err)
	}
	return le
}

// acquireFrom is acquire for another goroutine than the test's: it reports a failure with
// Errorf and returns nil.
func acquireFrom(t *testing.T, c hostclock.Clock, key string, k kind.Kind) hostclock.Lease {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	le, err := c.Acquire(ctx, key, k)
	if err != nil {
		t.Errorf("Acquire(%s, %s): %v", key, k, err)
	}
	return le
}

// gapAtLeast takes two starts and checks the second came at least gap after the first, for why.
func gapAtLeast(t *testing.T, c hostclock.Clock, key string, gap time.Duration, why string) {
	t.Helper()
	a := acquire(t, c, key, kind.HTML)
	a.Done(hostclock.Outcome{Status: 200})
	b := acquire(t, c, key, kind.HTML)
	b.Done(hostclock.Outcome{Status: 200})
	if g := b.Grant(); g.At.Sub(a.Grant().At) < gap-Slack || g.Reason != why {
		t.Errorf("starts came %v apart (%s), want at least %v (%s)", g.At.Sub(a.Grant().At), g.Reason, gap, why)
	}
}

func assertGivenUp(t *testing.T, c hostclock.Clock, key string) {
	t.Helper()
	var gu *hostclock.GiveUpError
	if _, err := c.Acquire(context.Background(), key, kind.HTML); !errors.As(err, &gu) || gu.Origin != key {
		t.Errorf("Acquire of a given-up origin = %v, want its *GiveUpError", err)
	}
	if _, err := c.Earliest(key); !errors.As(err, &gu) {
		t.Errorf("Earliest of a given-up origin = %v, want its *GiveUpError", err)
	}
	if _, why, err := c.PausedUntil(key); !errors.As(err, &gu) || why != hostclock.ReasonGiveUp {
		t.Errorf("PausedUntil of a given-up origin = %q, %v; want give-up", why, err)
	}
}

func stats(t *testing.T, c hostclock.Clock, key string) hostclock.OriginStats {
	t.Helper()
	for _, st := range c.Stats() {
		if st.Origin == key {
			return st
		}
	}
	t.Fatalf("Stats has no entry for %s", key)
	return hostclock.OriginStats{}
}

// margin lengthens d by the default margin, as the clock spaces the response time's interval.
func margin(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (1 + hostclock.DefaultMargin))
}
