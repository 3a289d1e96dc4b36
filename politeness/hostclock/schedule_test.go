package hostclock

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/kind"
)

// spaced returns the interval for rate r with the default margins, computed as the clock does.
func spaced(r float64) time.Duration { return Config{}.Interval(r) }

func TestScheduleSpacing(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		key    string
		floor  time.Duration
		want   time.Duration
		reason string
	}{
		{"default: 3 per second with the margin", Config{}, "a.example", 0, spaced(3), ReasonRate},
		{"lower configured rate", Config{Rate: 1}, "a.example", 0, spaced(1), ReasonRate},
		{"lower rate for one origin", Config{Rates: map[string]float64{"a.example": 0.5}}, "a.example", 0, spaced(0.5), ReasonRate},
		{"a lower rate for another origin leaves this one alone", Config{Rates: map[string]float64{"b.example": 0.5}}, "a.example", 0, spaced(3), ReasonRate},
		{"authorised higher rate", Config{Authorized: map[string]float64{"a.example": 10}}, "a.example", 0, spaced(10), ReasonRate},
		{"authorised key is normalised", Config{Authorized: map[string]float64{"A.Example:443": 10}}, "a.example", 0, spaced(10), ReasonRate},
		{"authorised key keeps its port", Config{Authorized: map[string]float64{"a.example:8080": 10}}, "a.example", 0, spaced(3), ReasonRate},
		{"authorised, then lowered", Config{Authorized: map[string]float64{"a.example": 10}, Rates: map[string]float64{"a.example": 5}}, "a.example", 0, spaced(5), ReasonRate},
		{"Crawl-delay stricter than the rate", Config{}, "a.example", 2 * time.Second, 2*time.Second + DefaultJitterMargin, ReasonCrawlDelay},
		{"Crawl-delay looser than the rate", Config{}, "a.example", 100 * time.Millisecond, spaced(3), ReasonRate},
		{"Crawl-delay capped", Config{MaxFloor: 5 * time.Second}, "a.example", time.Hour, spaced(0.2), ReasonCrawlDelay},
		{"Crawl-delay removed", Config{}, "a.example", -1, spaced(3), ReasonRate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, m := newTestLocal(t, tt.cfg)
			if tt.floor != 0 {
				l.SetFloor(tt.key, botSource, 7*time.Second)
				l.SetFloor(tt.key, botSource, tt.floor)
			}
			var prev time.Time
			for i := range 5 {
				le := acquire(t, m, l, tt.key)
				g := le.Grant()
				switch {
				case i == 0 && g.Wait != 0:
					t.Fatalf("first start waited %v; the first request of an origin starts at once", g.Wait)
				case i > 0 && g.At.Sub(prev) != tt.want:
					t.Fatalf("start %d came %v after the previous one, want exactly %v", i, g.At.Sub(prev), tt.want)
				case i > 0 && g.Reason != tt.reason:
					t.Fatalf("start %d waited for %q, want %q", i, g.Reason, tt.reason)
				}
				prev = g.At
				le.Done(Outcome{Status: 200})
			}
		})
	}
}

// No window of one second holds more than three starts, from the very first one on: a burst of
// requests gets evenly spaced starts, not three at once.
func TestNoWindowHoldsMoreThanTheRate(t *testing.T) {
	// Leases are handed back only as the test collects them, long after their simulated start, so
	// the response time's interval is off: this is about the window rule alone.
	l, m := newTestLocal(t, Config{Concurrency: 16, LatencyFactor: -1})
	var starts []time.Time
	chans := make([]<-chan result, 0, 12)
	chans = append(chans, acquireAsync(l, context.Background(), "a.example", kind.HTML))
	if r := <-chans[0]; r.err != nil || r.lease.Grant().Wait != 0 {
		t.Fatalf("first request: %+v, %v; want an immediate start", r.lease.Grant(), r.err)
	} else {
		starts = append(starts, r.lease.Grant().At)
	}
	for range 11 {
		chans = append(chans, acquireAsync(l, context.Background(), "a.example", kind.HTML))
	}
	waitQueue(t, m, l, "a.example", 11) // all in line before simulated time moves
	for _, ch := range chans[1:] {
		r := await(t, m, ch)
		if r.err != nil {
			t.Fatal(r.err)
		}
		starts = append(starts, r.lease.Grant().At)
		r.lease.Done(Outcome{Status: 200})
	}
	slices.SortFunc(starts, time.Time.Compare)
	for i := range starts {
		n := 0
		for _, s := range starts {
			if !s.Before(starts[i]) && s.Before(starts[i].Add(time.Second)) {
				n++
			}
		}
		if n > 3 {
			t.Fatalf("the second from start %d holds %d starts", i, n)
		}
	}
	if span, want := starts[11].Sub(starts[0]), 11*spaced(3); span != want {
		t.Errorf("12 starts spanned %v, want %v: the budget is not used evenly", span, want)
	}
}

// A request that left late (Lease.Sent) moves the origin's window: three more starts may not
// follow it within 1 s plus the jitter margin of when it actually left.
func TestWindowCountsFromWhenTheRequestLeft(t *testing.T) {
	l, m := newTestLocal(t, Config{})
	first := acquire(t, m, l, "a.example")
	m.Advance(100 * time.Millisecond)
	first.Sent()
	first.Done(Outcome{})
	var at []time.Time
	for range 3 {
		le := acquire(t, m, l, "a.example")
		at = append(at, le.Grant().At)
		le.Done(Outcome{})
	}
	window := 3 * spaced(3) // three whole intervals: 1 s plus the jitter margin, and the 4 %
	want := []time.Time{epoch.Add(spaced(3)), epoch.Add(2 * spaced(3)), epoch.Add(100*time.Millisecond + window)}
	for i := range want {
		if !at[i].Equal(want[i]) {
			t.Errorf("start %d at +%v, want +%v", i+1, at[i].Sub(epoch), want[i].Sub(epoch))
		}
	}
}

// lateAcquire takes a slot that a busy machine grants late: late after the moment it was due.
func lateAcquire(t *testing.T, m *manual, l *Local, key string, late time.Duration) Lease {
	t.Helper()
	ch := acquireAsync(l, context.Background(), key, kind.HTML)
	m.Advance(blocked(t, m) + late)
	r := await(t, m, ch)
	if r.err != nil {
		t.Fatalf("Acquire(%s): %v", key, r.err)
	}
	return r.lease
}

// After a pause the operator sees the next start no sooner than the pause's end, and the one after
// it a whole interval later — even when the first was granted late. Without a pause, a start
// granted late may be followed sooner (the GCRA schedule catches up, never closer than half an
// interval), which keeps the rate the configured one.
func TestAfterAPauseTheScheduleRestartsFromTheFirstStart(t *testing.T) {
	tests := []struct {
		name    string
		stop    func(l *Local, le Lease) // what happens after the first start
		late    time.Duration            // how late the next start is granted
		wantGap time.Duration            // between that start and the following one
	}{
		{"429 with Retry-After, granted 200 ms late", func(l *Local, le Lease) {
			le.Done(Outcome{Status: 429, RetryAfter: 2 * time.Second})
		}, 200 * time.Millisecond, spaced(1.5)},
		{"503 backoff, granted 600 ms late", func(l *Local, le Lease) {
			le.Done(Outcome{Status: 503})
		}, 600 * time.Millisecond, spaced(3)},
		{"an explicit pause, granted 100 ms late", func(l *Local, le Lease) {
			le.Done(Outcome{Status: 200})
			l.Pause("a.example", le.Grant().At.Add(5*time.Second), "operator")
		}, 100 * time.Millisecond, spaced(3)},
		{"no pause: a start granted 100 ms late is followed 100 ms sooner", func(l *Local, le Lease) {
			le.Done(Outcome{Status: 200})
		}, 100 * time.Millisecond, spaced(3) - 100*time.Millisecond},
		{"no pause: never sooner than half an interval", func(l *Local, le Lease) {
			le.Done(Outcome{Status: 200})
		}, 300 * time.Millisecond, spaced(3) / 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, m := newTestLocal(t, Config{})
			tt.stop(l, acquire(t, m, l, "a.example"))
			first := lateAcquire(t, m, l, "a.example", tt.late)
			first.Done(Outcome{Status: 200})
			second := acquire(t, m, l, "a.example")
			if gap := second.Grant().At.Sub(first.Grant().At); gap != tt.wantGap {
				t.Fatalf("the start after a start granted %v late came %v after it, want %v", tt.late, gap, tt.wantGap)
			}
		})
	}
}
