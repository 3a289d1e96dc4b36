package hostclock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/backoff"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// A request whose deadline comes before the earliest start the clock knows of is refused at once,
// with the rule and the time that stand in its way, and takes nothing from the origin.
func TestAcquireRefusesAtOnceWhenTheDeadlineComesFirst(t *testing.T) {
	tests := []struct {
		name     string
		before   func(t *testing.T, m *manual, l *Local) // what the origin went through
		deadline time.Duration                           // the request's, on the runtime's clock
		reason   string                                  // "" when the request is not refused
		earliest time.Duration                           // from the first grant
	}{
		{"Retry-After of 60 s, deadline in 10 s", func(t *testing.T, m *manual, l *Local) {
			acquire(t, m, l, "a.example").Done(Outcome{Status: 429, RetryAfter: time.Minute})
		}, 10 * time.Second, ReasonRetryAfter, time.Minute},
		{"backoff after a 503, deadline in 1 s", func(t *testing.T, m *manual, l *Local) {
			acquire(t, m, l, "a.example").Done(Outcome{Status: 503})
		}, time.Second, ReasonBackoff, backoff.ThrottledBackoff().Base},
		{"Crawl-delay of 30 s, deadline in 5 s", func(t *testing.T, m *manual, l *Local) {
			l.SetFloor("a.example", botSource, 30*time.Second)
			acquire(t, m, l, "a.example").Done(Outcome{Status: 200})
		}, 5 * time.Second, ReasonCrawlDelay, time.Duration(float64(30*time.Second) * (1 + DefaultMargin))},
		{"the rate's next start in 347 ms, deadline in 100 ms", func(t *testing.T, m *manual, l *Local) {
			acquire(t, m, l, "a.example").Done(Outcome{Status: 200})
		}, 100 * time.Millisecond, ReasonRate, spaced(3)},
		{"an operator's pause, deadline in 1 s", func(t *testing.T, m *manual, l *Local) {
			le := acquire(t, m, l, "a.example")
			le.Done(Outcome{Status: 200})
			l.Pause("a.example", le.Grant().At.Add(time.Hour), "maintenance")
		}, time.Second, "maintenance", time.Hour},
		{"Retry-After of 60 s, deadline in 70 s: it waits", func(t *testing.T, m *manual, l *Local) {
			acquire(t, m, l, "a.example").Done(Outcome{Status: 429, RetryAfter: time.Minute})
		}, 70 * time.Second, "", time.Minute},
		{"a first request is never refused", func(*testing.T, *manual, *Local) {}, time.Millisecond, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, m := newTestLocal(t, Config{})
			tt.before(t, m, l)
			want := epoch.Add(tt.earliest)
			ctx, cancel := context.WithTimeout(context.Background(), tt.deadline)
			defer cancel()
			before := l.Stats()
			if tt.reason == "" {
				r := await(t, m, acquireAsync(l, ctx, "a.example", kind.HTML))
				if r.err != nil || !r.lease.Grant().At.Equal(want) {
					t.Fatalf("Acquire = %v, want a grant at +%v", r.err, tt.earliest)
				}
				return
			}
			// Called from the test's goroutine: nothing moves simulated time while it runs, so it
			// either refuses at once or blocks until the real deadline and fails below.
			_, err := l.Acquire(ctx, "a.example", kind.HTML)
			var tl *WaitTooLongError
			if !errors.As(err, &tl) || tl.Origin != "a.example" || tl.Reason != tt.reason || !tl.Earliest.Equal(want) {
				t.Fatalf("Acquire = %v (%#v), want a *WaitTooLongError for %s at +%v", err, tl, tt.reason, tt.earliest)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("errors.Is(%v, context.DeadlineExceeded) = false", err)
			}
			after := l.Stats()[0]
			if after.Requests != before[0].Requests || after.TooLong != 1 {
				t.Errorf("stats after the refusal: %+v, want no slot taken and TooLong 1", after)
			}
			// Nothing was reserved: a request without a deadline starts at that earliest moment.
			if le := acquire(t, m, l, "a.example"); !le.Grant().At.Equal(want) {
				t.Errorf("the next request started at +%v, want +%v", le.Grant().At.Sub(epoch), tt.earliest)
			}
		})
	}
}

func TestWaitTooLongErrorSaysWhatStandsInTheWay(t *testing.T) {
	l, m := newTestLocal(t, Config{})
	acquire(t, m, l, "h:80").Done(Outcome{Status: 429, RetryAfter: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := l.Acquire(ctx, "h:80", kind.HTML)
	want := "hostclock: origin h:80 cannot start before 01:01:00 (retry-after, 60s from now); the request's deadline is 10s away: " +
		"send it later, or give it a later deadline"
	if err == nil || err.Error() != want {
		t.Fatalf("error text:\n got %v\nwant %s", err, want)
	}
}

// The concurrency cap and the line are waits the clock cannot foresee: they never refuse a request.
func TestAcquireDoesNotRefuseForConcurrency(t *testing.T) {
	l, m := newTestLocal(t, Config{Authorized: map[string]float64{"a.example": 1e6}, Concurrency: 1})
	held := acquire(t, m, l, "a.example")
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	ch := acquireAsync(l, ctx, "a.example", kind.HTML)
	if d := blocked(t, m); d != DefaultLeaseTTL {
		t.Fatalf("waiting on a timer of %v, want the held lease's expiry", d)
	}
	held.Done(Outcome{Status: 200})
	if r := await(t, m, ch); r.err != nil {
		t.Fatalf("Acquire = %v, want a grant once the place is free", r.err)
	}
}

// A pause that starts while requests wait refuses at once each whose deadline now comes first,
// wherever it is in the line; the others keep waiting.
func TestAWaitingRequestLeavesWhenAPausePushesPastItsDeadline(t *testing.T) {
	l, m := newTestLocal(t, Config{})
	first := acquire(t, m, l, "a.example")
	patient := acquireAsync(l, context.Background(), "a.example", kind.HTML)
	blocked(t, m)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hurried := acquireAsync(l, ctx, "a.example", kind.HTML)
	waitQueue(t, m, l, "a.example", 2)
	first.Done(Outcome{Status: 503, RetryAfter: time.Minute})
	var tl *WaitTooLongError
	if r := receive(t, hurried); !errors.As(r.err, &tl) || tl.Reason != ReasonRetryAfter {
		t.Fatalf("the request behind, with a 10 s deadline: %v, want a *WaitTooLongError for the Retry-After", r.err)
	}
	if r := await(t, m, patient); r.err != nil || r.lease.Grant().At.Sub(epoch) != time.Minute {
		t.Fatalf("the request without a deadline: %v, want a grant after the minute's pause", r.err)
	}
}
