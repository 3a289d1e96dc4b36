package hostclock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/backoff"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// next takes one more start and returns how long after prev it came and why it waited.
func next(t *testing.T, m *manual, l *Local, prev time.Time, out Outcome) (time.Duration, string, time.Time) {
	t.Helper()
	le := acquire(t, m, l, "a.example")
	g := le.Grant()
	le.Done(out)
	return g.At.Sub(prev), g.Reason, g.At
}

func TestLearning(t *testing.T) {
	ok := Outcome{Status: 200}
	throttled := backoff.ThrottledBackoff()
	transient := backoff.TransientBackoff()
	type step struct {
		out    Outcome       // reported for this start
		gap    time.Duration // expected gap before the NEXT start
		reason string
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"429 without Retry-After: backoff, then half the rate", []step{
			{Outcome{Status: 429}, throttled.Base, ReasonBackoff},
			{ok, spaced(1.5), ReasonRate},
			{ok, spaced(1.5), ReasonRate},
		}},
		{"429 with Retry-After: that pause, then half the rate", []step{
			{Outcome{Status: 429, RetryAfter: 7 * time.Second}, 7 * time.Second, ReasonRetryAfter},
			{ok, spaced(1.5), ReasonRate},
		}},
		{"second 429 halves again and doubles the backoff", []step{
			{Outcome{Status: 429}, throttled.Base, ReasonBackoff},
			{Outcome{Status: 429}, 2 * throttled.Base, ReasonBackoff},
			{ok, spaced(0.75), ReasonRate},
		}},
		{"503 pauses but keeps the rate", []step{
			{Outcome{Status: 503}, throttled.Base, ReasonBackoff},
			{ok, spaced(3), ReasonRate},
		}},
		{"503 backoff grows while it lasts", []step{
			{Outcome{Status: 503}, throttled.Base, ReasonBackoff},
			{Outcome{Status: 503}, 2 * throttled.Base, ReasonBackoff},
			{Outcome{Status: 503}, 4 * throttled.Base, ReasonBackoff},
			{ok, spaced(3), ReasonRate},
			{Outcome{Status: 503}, throttled.Base, ReasonBackoff},
		}},
		{"503 with Retry-After", []step{
			{Outcome{Status: 503, RetryAfter: 3 * time.Second}, 3 * time.Second, ReasonRetryAfter},
		}},
		{"a Retry-After shorter than the interval does not shorten it", []step{
			{Outcome{Status: 503, RetryAfter: 100 * time.Millisecond}, spaced(3), ReasonRate},
		}},
		{"500 backs off mildly", []step{
			{Outcome{Status: 500}, transient.Base, ReasonBackoff},
			{Outcome{Status: 502}, 2 * transient.Base, ReasonBackoff},
			{ok, spaced(3), ReasonRate},
		}},
		{"connection error backs off mildly", []step{
			{Outcome{Err: errors.New("connection refused")}, transient.Base, ReasonBackoff},
		}},
		{"timeout backs off mildly", []step{
			{Outcome{Err: context.DeadlineExceeded}, transient.Base, ReasonBackoff},
		}},
		{"a request the caller cancelled teaches nothing", []step{
			{Outcome{Err: context.Canceled}, spaced(3), ReasonRate},
		}},
		{"Retry-After on a redirect pauses without counting a failure", []step{
			{Outcome{Status: 301, RetryAfter: 4 * time.Second}, 4 * time.Second, ReasonRetryAfter},
			{Outcome{Status: 503}, throttled.Base, ReasonBackoff},
		}},
		{"Retry-After on a 200 is ignored", []step{
			{Outcome{Status: 200, RetryAfter: 4 * time.Second}, spaced(3), ReasonRate},
		}},
		{"404 is an answer, not a failure", []step{
			{Outcome{Status: 404}, spaced(3), ReasonRate},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, m := newTestLocal(t, Config{})
			le := acquire(t, m, l, "a.example")
			for i, s := range tt.steps {
				le.Done(s.out)
				prev := le.Grant().At
				le = acquire(t, m, l, "a.example")
				if gap, reason := le.Grant().At.Sub(prev), le.Grant().Reason; gap != s.gap || reason != s.reason {
					t.Fatalf("step %d (%+v): next start after %v (%s), want %v (%s)", i, s.out, gap, reason, s.gap, s.reason)
				}
			}
			le.Done(ok)
		})
	}
}

func TestBackoffJitterIsInjected(t *testing.T) {
	l, m := newTestLocal(t, Config{Rand: func() float64 { return 0.5 }})
	le := acquire(t, m, l, "a.example")
	le.Done(Outcome{Status: 503})
	p, ok := le.Caused()
	want := backoff.ThrottledBackoff().Base + backoff.ThrottledBackoff().Base/8 // 25 % jitter × 0.5
	if !ok || p.Reason != ReasonBackoff || p.Until.Sub(le.Grant().At) != want {
		t.Fatalf("Caused() = %+v, %v; want a backoff pause of %v", p, ok, want)
	}
}

func TestRecoveryAfterARunOfSuccesses(t *testing.T) {
	l, m := newTestLocal(t, Config{RecoverAfter: 3})
	_, _, prev := next(t, m, l, epoch, Outcome{Status: 429})
	factor := 0.5
	// After each run of three successes the rate steps up by a quarter, until it is whole again.
	for run := range 5 {
		for i := range 3 {
			gap, _, at := next(t, m, l, prev, Outcome{Status: 200})
			if run == 0 && i == 0 {
				prev = at // the first start after the 429 waits for the pause
				continue
			}
			if want := spaced(3 * factor); gap != want {
				t.Fatalf("run %d, start %d: gap %v, want %v (rate factor %v)", run, i, gap, want, factor)
			}
			prev = at
		}
		factor = min(1, factor*RecoverStep)
	}
	if st := l.Stats()[0]; st.Rate != 3 {
		t.Errorf("rate after recovery = %v, want 3", st.Rate)
	}
}

func TestRateFloorAfterMany429s(t *testing.T) {
	l, m := newTestLocal(t, Config{ErrorBudget: 100, Backoff: func(backoff.Class, int, func() float64) time.Duration { return time.Second }})
	for range 10 {
		next(t, m, l, epoch, Outcome{Status: 429})
	}
	if st := l.Stats()[0]; st.Rate != 3*minRateFactor {
		t.Errorf("rate after 10×429 = %v, want %v", st.Rate, 3*minRateFactor)
	}
}

func TestErrorBudget(t *testing.T) {
	tests := []struct {
		name     string
		outcomes []Outcome
		gaveUp   bool
	}{
		{"three failures in a row", []Outcome{{Status: 500}, {Status: 503}, {Err: errors.New("reset")}}, true},
		{"a success resets the count", []Outcome{{Status: 500}, {Status: 500}, {Status: 200}, {Status: 500}, {Status: 500}}, false},
		{"client errors are answers", []Outcome{{Status: 500}, {Status: 500}, {Status: 404}, {Status: 500}, {Status: 500}}, false},
		{"a cancelled request neither counts nor resets", []Outcome{{Status: 500}, {Status: 500}, {Err: context.Canceled}, {Status: 429}}, true},
		{"Retry-After beyond the ceiling", []Outcome{{Status: 429, RetryAfter: 25 * time.Hour}}, true},
		{"Retry-After at the ceiling is waited for", []Outcome{{Status: 429, RetryAfter: 24 * time.Hour}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, m := newTestLocal(t, Config{ErrorBudget: 3})
			for _, o := range tt.outcomes {
				le := acquire(t, m, l, "a.example")
				le.Done(o)
			}
			_, reason, perr := l.PausedUntil("a.example")
			var gu *GiveUpError
			if got := errors.As(perr, &gu); got != tt.gaveUp {
				t.Fatalf("given up = %v (%v), want %v", got, perr, tt.gaveUp)
			}
			st := l.Stats()[0]
			if !tt.gaveUp {
				if st.GiveUps != 0 {
					t.Fatalf("GiveUps = %d", st.GiveUps)
				}
				return
			}
			if reason != ReasonGiveUp || st.GiveUps != 1 || st.GiveUpReason == "" {
				t.Fatalf("reason %q, stats %+v", reason, st)
			}
			_, err := l.Acquire(context.Background(), "a.example", kind.HTML)
			if !errors.As(err, &gu) || gu.Origin != "a.example" || !strings.Contains(err.Error(), "given up") {
				t.Fatalf("Acquire after the give-up: %v, want a *GiveUpError", err)
			}
			if st := l.Stats()[0]; st.Refused != 1 {
				t.Errorf("Refused = %d, want 1", st.Refused)
			}
			// Other origins are unaffected.
			le := acquire(t, m, l, "b.example")
			le.Done(Outcome{Status: 200})
		})
	}
}

func TestGiveUpWakesWaiters(t *testing.T) {
	l, m := newTestLocal(t, Config{ErrorBudget: 1, Concurrency: 1})
	le := acquire(t, m, l, "a.example")
	ch := acquireAsync(l, context.Background(), "a.example", kind.HTML)
	blocked(t, m) // waiting for the concurrency place (until the lease would expire)
	le.Done(Outcome{Status: 500})
	r := <-ch
	var gu *GiveUpError
	if !errors.As(r.err, &gu) {
		t.Fatalf("waiting Acquire returned %v, want a *GiveUpError", r.err)
	}
}
