package hostclock

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/backoff"
)

// remembered reports whether the clock keeps key's state.
func remembered(l *Local, key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.origins[key]
	return ok
}

// useOthers takes and returns one slot at each of n origins used nowhere else, as a crawl moving
// through many sites does; each call lets the clock sweep.
func useOthers(t *testing.T, m *manual, l *Local, n int) {
	t.Helper()
	for range n {
		others++
		acquire(t, m, l, fmt.Sprintf("other-%d.example", others)).Done(Outcome{Status: 200})
	}
}

var others int

// An origin nobody used for ForgetAfter, and that nothing holds, is forgotten: a crawl passing
// through many sites keeps the state of the recent ones only.
func TestIdleOriginsAreForgotten(t *testing.T) {
	l, m := newTestLocal(t, Config{})
	acquire(t, m, l, "a.example").Done(Outcome{Status: 200})
	m.Advance(DefaultForgetAfter - time.Second)
	useOthers(t, m, l, 1)
	if !remembered(l, "a.example") {
		t.Fatal("a.example forgotten before it was idle for DefaultForgetAfter")
	}
	m.Advance(time.Second)
	useOthers(t, m, l, 1)
	if remembered(l, "a.example") {
		t.Fatal("a.example still remembered after DefaultForgetAfter idle")
	}
	for range 1000 { // a thousand sites, one a second
		useOthers(t, m, l, 1)
		m.Advance(time.Second)
	}
	l.mu.Lock()
	n := len(l.origins)
	l.mu.Unlock()
	if n > 70 {
		t.Fatalf("the clock keeps %d origins after 1000 s of one new origin a second; want the last minute's (about 60)", n)
	}
}

// A request in flight holds its origin: it is not forgotten however long the request takes.
func TestAnOriginInFlightIsRemembered(t *testing.T) {
	l, m := newTestLocal(t, Config{ForgetAfter: time.Second})
	le := acquire(t, m, l, "a.example")
	m.Advance(5 * time.Minute)
	useOthers(t, m, l, 8)
	if !remembered(l, "a.example") {
		t.Fatal("a.example forgotten while a request to it was in flight")
	}
	le.Done(Outcome{Status: 200})
}

// Forgetting never gives an origin a start sooner than remembering it would: a pause, a
// Crawl-delay, a backoff, a 429 penalty, a run of errors, a slowdown or the rate's spacing still
// in force keep the origin remembered, however long it has been idle.
func TestForgettingKeepsEveryPromise(t *testing.T) {
	hour := func(backoff.Class, int, func() float64) time.Duration { return time.Hour }
	second := func(backoff.Class, int, func() float64) time.Duration { return time.Second }
	tests := []struct {
		name  string
		cfg   Config
		check func(t *testing.T, m *manual, l *Local)
	}{
		{"a Retry-After pause", Config{}, func(t *testing.T, m *manual, l *Local) {
			first := acquire(t, m, l, "a.example")
			first.Done(Outcome{Status: 429, RetryAfter: time.Hour})
			m.Advance(10 * time.Minute)
			useOthers(t, m, l, 8)
			if at := acquire(t, m, l, "a.example").Grant().At; at.Before(first.Grant().At.Add(time.Hour)) {
				t.Fatalf("started %v after a Retry-After of 1h", at.Sub(first.Grant().At))
			}
		}},
		{"a backoff pause", Config{Backoff: hour}, func(t *testing.T, m *manual, l *Local) {
			first := acquire(t, m, l, "a.example")
			first.Done(Outcome{Status: 503})
			m.Advance(10 * time.Minute)
			useOthers(t, m, l, 8)
			if at := acquire(t, m, l, "a.example").Grant().At; at.Before(first.Grant().At.Add(time.Hour)) {
				t.Fatalf("started %v after a backoff of 1h", at.Sub(first.Grant().At))
			}
		}},
		{"a Crawl-delay floor", Config{}, func(t *testing.T, m *manual, l *Local) {
			l.SetFloor("a.example", botSource, 30*time.Second)
			first := acquire(t, m, l, "a.example")
			first.Done(Outcome{Status: 200})
			m.Advance(5 * time.Second)
			useOthers(t, m, l, 8)
			if gap := acquire(t, m, l, "a.example").Grant().At.Sub(first.Grant().At); gap < 30*time.Second+DefaultJitterMargin {
				t.Fatalf("started %v after the previous start under a Crawl-delay of 30s", gap)
			}
		}},
		{"the 429 penalty on the rate", Config{}, func(t *testing.T, m *manual, l *Local) {
			acquire(t, m, l, "a.example").Done(Outcome{Status: 429, RetryAfter: 2 * time.Second})
			m.Advance(10 * time.Second)
			useOthers(t, m, l, 8)
			first := acquire(t, m, l, "a.example")
			first.Done(Outcome{Status: 200})
			if gap := acquire(t, m, l, "a.example").Grant().At.Sub(first.Grant().At); gap < spaced(1.5) {
				t.Fatalf("starts %v apart after a 429 halved the rate, want %v", gap, spaced(1.5))
			}
		}},
		{"a run of errors toward the error budget", Config{ErrorBudget: 2, Backoff: second}, func(t *testing.T, m *manual, l *Local) {
			acquire(t, m, l, "a.example").Done(Outcome{Status: 503})
			m.Advance(10 * time.Second)
			useOthers(t, m, l, 8)
			acquire(t, m, l, "a.example").Done(Outcome{Status: 503})
			var gu *GiveUpError
			if _, _, err := l.PausedUntil("a.example"); !errors.As(err, &gu) {
				t.Fatalf("two 503s in a row with an error budget of 2 did not give the origin up: %v", err)
			}
		}},
		{"a slowdown by the response time", Config{}, func(t *testing.T, m *manual, l *Local) {
			slow := acquire(t, m, l, "a.example")
			m.Advance(2 * time.Second) // a 2 s answer: starts at least 4 s apart
			slow.Done(Outcome{Status: 200})
			m.Advance(10 * time.Second)
			useOthers(t, m, l, 8)
			fast := acquire(t, m, l, "a.example")
			fast.Done(Outcome{Status: 200}) // an instant answer halves the smoothed time: 1 s
			want := time.Duration(float64(2*time.Second) * (1 + DefaultMargin))
			if gap := acquire(t, m, l, "a.example").Grant().At.Sub(fast.Grant().At); gap < want {
				t.Fatalf("starts %v apart after a slow answer, want at least %v", gap, want)
			}
		}},
		{"the rate's spacing", Config{ForgetAfter: time.Millisecond}, func(t *testing.T, m *manual, l *Local) {
			var starts []time.Time
			for range 12 {
				le := acquire(t, m, l, "a.example")
				starts = append(starts, le.Grant().At)
				le.Done(Outcome{Status: 200})
				m.Advance(200 * time.Millisecond) // idle for far more than ForgetAfter, less than the interval
				useOthers(t, m, l, 8)
			}
			for i := 3; i < len(starts); i++ {
				if span := starts[i].Sub(starts[i-3]); span < time.Second+DefaultJitterMargin {
					t.Fatalf("starts %d to %d spanned %v, want at least %v", i-3, i, span, time.Second+DefaultJitterMargin)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.cfg.ForgetAfter == 0 {
				tt.cfg.ForgetAfter = time.Second
			}
			l, m := newTestLocal(t, tt.cfg)
			tt.check(t, m, l)
		})
	}
}

// A lease whose Done never came expires; when its origin has been forgotten since and the
// answer comes after all, it still counts: a 429 with Retry-After pauses the origin.
func TestALateOutcomeReachesAForgottenOrigin(t *testing.T) {
	l, m := newTestLocal(t, Config{ForgetAfter: time.Second, LeaseTTL: time.Minute})
	le := acquire(t, m, l, "a.example")
	m.Advance(2 * time.Minute)
	useOthers(t, m, l, 8)
	if remembered(l, "a.example") {
		t.Fatal("a.example still remembered after its lease expired; the case under test is a forgotten one")
	}
	le.Done(Outcome{Status: 429, RetryAfter: time.Hour})
	until, _, err := l.PausedUntil("a.example")
	if err != nil || !until.Equal(m.Now().Add(time.Hour)) {
		t.Fatalf("PausedUntil after the late 429 = %v, %v; want %v", until, err, m.Now().Add(time.Hour))
	}
}
