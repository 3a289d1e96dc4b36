package hostclock

import (
	"bytes"
	"errors"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"
)

// latencyGap is the spacing a smoothed response time rt asks for at factor f, as the clock derives it.
func latencyGap(f float64, rt time.Duration) time.Duration {
	return time.Duration(float64(time.Duration(f*float64(rt))) * (1 + DefaultMargin))
}

const (
	fast = 100 * time.Millisecond
	slow = 1500 * time.Millisecond
)

// The response time spaces the starts when it is slower than the budget, and only then: a
// request is sent, answered took later, and the next one asked for at once.
func TestLatencySpacesTheStarts(t *testing.T) {
	ok := Outcome{Status: 200}
	type step struct {
		took   time.Duration // the response time of this start
		out    Outcome
		gap    time.Duration // from this start to the next
		reason string        // why the next one waited; "" when it did not
	}
	repeat := func(n int, s step) []step {
		out := make([]step, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	tests := []struct {
		name   string
		factor float64
		steps  []step
	}{
		{"answers in 100 ms keep 3 per second", 0, repeat(8, step{fast, ok, spaced(3), ReasonRate})},
		{"answers in 1.5 s space the starts by twice that at once", 0, append(repeat(3, step{fast, ok, spaced(3), ReasonRate}),
			repeat(4, step{slow, ok, latencyGap(2, slow), ReasonLatency})...)},
		{"back to 100 ms: the budget returns over five answers, never beyond", 0, append(repeat(2, step{slow, ok, latencyGap(2, slow), ReasonLatency}),
			step{fast, ok, latencyGap(2, 800*time.Millisecond), ReasonLatency}, // the smoothed time moves halfway: 1.5 s → 800 ms
			step{fast, ok, latencyGap(2, 450*time.Millisecond), ReasonLatency},
			step{fast, ok, latencyGap(2, 275*time.Millisecond), ReasonLatency},
			step{fast, ok, latencyGap(2, 187500*time.Microsecond), ReasonLatency},
			step{fast, ok, spaced(3), ReasonRate}, // 143.75 ms × 2 is below the rate's interval
			step{fast, ok, spaced(3), ReasonRate},
			step{fast, ok, spaced(3), ReasonRate})},
		{"a factor of 4", 4, []step{{slow, ok, latencyGap(4, slow), ReasonLatency}}},
		{"a factor of 1", 1, []step{{time.Second, ok, latencyGap(1, time.Second), ReasonLatency}}},
		{"turned off: a slow answer is followed at once", -1, repeat(3, step{slow, ok, slow, ""})},
		{"capped at the Crawl-delay cap", 0, []step{{40 * time.Second, ok, time.Duration(float64(DefaultMaxFloor) * (1 + DefaultMargin)), ReasonLatency}}},
		{"a 304 is a response", 0, []step{{slow, Outcome{Status: 304}, latencyGap(2, slow), ReasonLatency}}},
		{"a 404 is a response", 0, []step{{slow, Outcome{Status: 404}, latencyGap(2, slow), ReasonLatency}}},
		{"a transport error is not a response", 0, []step{{slow, Outcome{Err: errors.New("reset")}, slow + time.Second, "backoff"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, m := newTestLocal(t, Config{LatencyFactor: tt.factor})
			le := acquire(t, m, l, "a.example")
			for i, s := range tt.steps {
				m.Advance(s.took)
				le.Done(s.out)
				prev := le.Grant().At
				le = acquire(t, m, l, "a.example")
				g := le.Grant()
				if gap := g.At.Sub(prev); gap != s.gap || g.Reason != s.reason {
					t.Fatalf("step %d (answered in %v): next start after %v (%q), want %v (%q)", i, s.took, gap, g.Reason, s.gap, s.reason)
				}
				if gap := g.At.Sub(prev); gap < spaced(3) {
					t.Fatalf("step %d: a gap of %v is above the budget of 3 per second", i, gap)
				}
			}
			le.Done(ok)
		})
	}
}

// An origin's pace change is reported once when its response time starts spacing the starts and
// once when it stops: through the lease, the stats and the log.
func TestLatencyReportsTheSlowdownAndTheRecovery(t *testing.T) {
	var log bytes.Buffer
	l, m := newTestLocal(t, Config{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	var paces []Pace
	var at []int
	for i, took := range []time.Duration{fast, fast, slow, slow, slow, fast, fast, fast, fast, fast, fast, fast} {
		le := acquire(t, m, l, "a.example")
		m.Advance(took)
		le.Done(Outcome{Status: 200})
		if p, ok := le.Paced(); ok {
			paces, at = append(paces, p), append(at, i)
		}
	}
	want := []Pace{{Slowed: true, Interval: latencyGap(2, slow), ResponseTime: slow}, {Slowed: false, Interval: latencyGap(2, 143750*time.Microsecond), ResponseTime: 143750 * time.Microsecond}}
	if len(paces) != 2 || paces[0] != want[0] || paces[1] != want[1] || at[0] != 2 || at[1] != 9 {
		t.Fatalf("paces %+v at responses %v, want %+v at 2 and 9", paces, at, want)
	}
	for _, msg := range []string{"slowed down by its response time", "back to its budget"} {
		if n := strings.Count(log.String(), msg); n != 1 {
			t.Errorf("%d log records %q, want 1:\n%s", n, msg, log.String())
		}
	}
	st := l.Stats()[0]
	if st.Slowdowns != 1 || st.ResponseTime != 110937500*time.Nanosecond || st.LatencyInterval != latencyGap(2, st.ResponseTime) {
		t.Errorf("stats %+v", st)
	}
}

// A response time counts from when the request was first reported sent, not from the grant: the
// time a request takes to reach the server (a dial, a TLS handshake) is not the server's.
func TestLatencyCountsFromTheFirstSent(t *testing.T) {
	l, m := newTestLocal(t, Config{})
	le := acquire(t, m, l, "a.example")
	m.Advance(time.Second) // connecting
	le.Sent()
	m.Advance(200 * time.Millisecond) // the first response byte, on a new connection
	le.Sent()
	m.Advance(slow - 200*time.Millisecond)
	le.Done(Outcome{Status: 200})
	if st := l.Stats()[0]; st.ResponseTime != slow {
		t.Fatalf("response time %v, want %v from the first Sent", st.ResponseTime, slow)
	}
}

func TestLatencyFactorRefusals(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1)} {
		if _, err := NewLocal(Config{LatencyFactor: f}); err == nil || !strings.Contains(err.Error(), "LatencyFactor") {
			t.Errorf("NewLocal(LatencyFactor: %g) = %v, want a refusal", f, err)
		}
	}
}

// A lease that expired timed a leaked body, not the server: its late Done does not slow the origin.
func TestLatencyIgnoresAnExpiredLease(t *testing.T) {
	l, m := newTestLocal(t, Config{LeaseTTL: time.Minute})
	leaked := acquire(t, m, l, "a.example")
	m.Advance(2 * time.Minute)
	answered := acquire(t, m, l, "a.example") // reclaims the leaked lease's place
	answered.Done(Outcome{Status: 200})
	leaked.Done(Outcome{Status: 200}) // two minutes after its grant
	st := l.Stats()[0]
	if st.Expired != 1 || st.ResponseTime != 0 || st.LatencyInterval != 0 || st.Slowdowns != 0 {
		t.Fatalf("stats %+v, want the expired lease's time ignored", st)
	}
	if next := acquire(t, m, l, "a.example"); next.Grant().At.Sub(answered.Grant().At) != spaced(3) {
		t.Errorf("the next start came %v after the last, want the rate's %v", next.Grant().At.Sub(answered.Grant().At), spaced(3))
	}
}
