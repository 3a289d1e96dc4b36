package hostclock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/kind"
)

// Earliest tells a frontier when an origin may start next, from the same rules Acquire applies,
// without taking anything.
func TestEarliest(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		before func(t *testing.T, m *manual, l *Local) // what the origin went through
		want   time.Duration                           // from the epoch
	}{
		{"an origin never seen may start now", Config{}, func(*testing.T, *manual, *Local) {}, 0},
		{"one interval after a start", Config{}, func(t *testing.T, m *manual, l *Local) {
			acquire(t, m, l, "a.example").Done(Outcome{Status: 200})
		}, spaced(3)},
		{"now, once the interval has passed", Config{}, func(t *testing.T, m *manual, l *Local) {
			acquire(t, m, l, "a.example").Done(Outcome{Status: 200})
			m.Advance(5 * time.Second)
		}, 5 * time.Second},
		{"the Crawl-delay floor", Config{}, func(t *testing.T, m *manual, l *Local) {
			l.SetFloor("a.example", botSource, 10*time.Second)
			acquire(t, m, l, "a.example").Done(Outcome{Status: 200})
		}, time.Duration(float64(10*time.Second) * (1 + DefaultMargin))},
		{"a Retry-After pause", Config{}, func(t *testing.T, m *manual, l *Local) {
			acquire(t, m, l, "a.example").Done(Outcome{Status: 429, RetryAfter: 30 * time.Second})
		}, 30 * time.Second},
		{"a pause on an origin not started yet", Config{}, func(t *testing.T, m *manual, l *Local) {
			l.Pause("a.example", epoch.Add(time.Minute), "operator")
		}, time.Minute},
		{"the concurrency cap is not counted", Config{Concurrency: 1}, func(t *testing.T, m *manual, l *Local) {
			acquire(t, m, l, "a.example") // held: the frontier keeps its own count
		}, spaced(3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, m := newTestLocal(t, tt.cfg)
			tt.before(t, m, l)
			want := epoch.Add(tt.want)
			for range 3 { // asking reserves nothing: the answer stays the same
				// A time not after the caller's now means "at once".
				if at, err := l.Earliest("a.example"); err != nil || !later(at, m.Now()).Equal(want) {
					t.Fatalf("Earliest = +%v, %v; want +%v", later(at, m.Now()).Sub(epoch), err, tt.want)
				}
			}
			if tt.cfg.Concurrency == 1 {
				return
			}
			if le := acquire(t, m, l, "a.example"); !le.Grant().At.Equal(want) {
				t.Errorf("Acquire granted at +%v, Earliest said +%v", le.Grant().At.Sub(epoch), tt.want)
			}
		})
	}
}

func TestEarliestOfAGivenUpOrigin(t *testing.T) {
	l, m := newTestLocal(t, Config{ErrorBudget: 1})
	acquire(t, m, l, "a.example").Done(Outcome{Status: 500})
	at, err := l.Earliest("a.example")
	var gu *GiveUpError
	if !errors.As(err, &gu) || gu.Origin != "a.example" || !at.IsZero() {
		t.Fatalf("Earliest = %v, %v; want a *GiveUpError", at, err)
	}
	if at, err := l.Earliest("b.example"); err != nil || at.After(m.Now()) {
		t.Errorf("another origin: %v, %v; want now", at, err)
	}
}

// A ready origin's answer must not lie after the caller's own reading of now: a frontier that
// compares the two would otherwise wait a few hundred nanoseconds, ask again, and spin (seen
// with the real clock, never with the manual one, whose time stands still).
func TestEarliestOfAReadyOriginIsNotAfterTheCallersNow(t *testing.T) {
	l, err := NewLocal(Config{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if at, err := l.Earliest("never.example"); err != nil || at.After(now) {
		t.Errorf("Earliest = %v after the caller's now (%v)", at.Sub(now), err)
	}
}

// BenchmarkEarliest measures the frontier's question for an origin with a schedule running; it
// should not allocate.
//
//	go test -run '^$' -bench Earliest -benchmem ./politeness/hostclock/
func BenchmarkEarliest(b *testing.B) {
	l, err := NewLocal(Config{Logger: quiet()})
	if err != nil {
		b.Fatal(err)
	}
	le, err := l.Acquire(context.Background(), "a.example", kind.HTML)
	if err != nil {
		b.Fatal(err)
	}
	le.Done(Outcome{Status: 200})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Earliest("a.example"); err != nil {
			b.Fatal(err)
		}
	}
}
