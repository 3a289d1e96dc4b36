package redisstore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/internal/idle"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/redisstore/redistest"
)

// manualNow is the time this process's lines are used and forgotten by, moved by the test. The
// schedule itself runs on the Redis server's clock, which the test does not move.
type manualNow struct{ offset atomic.Int64 }

func (m *manualNow) now() time.Time          { return time.Now().Add(time.Duration(m.offset.Load())) }
func (m *manualNow) advance(d time.Duration) { m.offset.Add(int64(d)) }

// forgetClock returns a clock on srv whose lines age by m.
func forgetClock(t *testing.T, srv *redistest.Server, m *manualNow) *Clock {
	t.Helper()
	c := testClock(t, srv, hostclock.Config{LatencyFactor: -1})
	c.now = m.now
	return c
}

func remembered(c *Clock, key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.lines[key]
	return ok
}

func linesKept(c *Clock) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.lines)
}

var otherOrigins atomic.Int64

// useOthers asks for the earliest start of n origins used nowhere else, as a frontier moving
// through many sites does; each call lets the clock sweep its lines.
func useOthers(t *testing.T, c *Clock, n int) {
	t.Helper()
	for range n {
		if _, err := c.Earliest(fmt.Sprintf("other-%d.forget.test", otherOrigins.Add(1))); err != nil {
			t.Fatal(err)
		}
	}
}

// An origin this process did not use for ForgetAfter, with no request of it waiting or in
// flight, is forgotten: a crawl through many sites keeps the lines of the recent ones only.
func TestIdleLinesAreForgotten(t *testing.T) {
	srv := redistest.Start(t)
	m := &manualNow{}
	c := forgetClock(t, srv, m)
	ctx := context.Background()
	le, err := c.Acquire(ctx, "a.forget.test", kind.HTML)
	if err != nil {
		t.Fatal(err)
	}
	le.Done(hostclock.Outcome{Status: 200})
	m.advance(hostclock.DefaultForgetAfter - time.Second)
	useOthers(t, c, 1)
	if !remembered(c, "a.forget.test") {
		t.Fatal("a.forget.test forgotten before it was idle for DefaultForgetAfter")
	}
	m.advance(time.Second)
	useOthers(t, c, 1)
	if remembered(c, "a.forget.test") {
		t.Fatal("a.forget.test still remembered after DefaultForgetAfter idle")
	}
	for range 1000 { // a thousand sites, one a second
		useOthers(t, c, 1)
		m.advance(time.Second)
	}
	if n := linesKept(c); n > 70 {
		t.Fatalf("the clock keeps %d lines after 1000 s of one new origin a second; want the last minute's (about 60)", n)
	}
}

// A line with a request of this process in flight, or waiting, is kept however long that takes;
// once the request is done and the line idle for ForgetAfter, it goes.
func TestALineHoldingARequestIsRemembered(t *testing.T) {
	srv := redistest.Start(t)
	m := &manualNow{}
	c := forgetClock(t, srv, m)
	ctx := context.Background()

	le, err := c.Acquire(ctx, "flight.forget.test", kind.HTML)
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan struct{}, 1)
	c.testHookWait = func(key string, _ kind.Kind, _ string) {
		if key == "wait.forget.test" {
			select {
			case waiting <- struct{}{}:
			default:
			}
		}
	}
	c.Pause("wait.forget.test", time.Now().Add(time.Hour), "maintenance")
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	gotErr := make(chan error, 1)
	go func() {
		_, err := c.Acquire(wctx, "wait.forget.test", kind.HTML)
		gotErr <- err
	}()
	<-waiting

	m.advance(10 * hostclock.DefaultForgetAfter)
	useOthers(t, c, 2*idle.SweepBatch)
	if !remembered(c, "flight.forget.test") || !remembered(c, "wait.forget.test") {
		t.Fatalf("a line was forgotten with a request in flight (%v) or waiting (%v)",
			remembered(c, "flight.forget.test"), remembered(c, "wait.forget.test"))
	}

	le.Done(hostclock.Outcome{Status: 200})
	cancel()
	if err := <-gotErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("the waiting Acquire returned %v, want context.Canceled", err)
	}
	m.advance(hostclock.DefaultForgetAfter)
	useOthers(t, c, 2*idle.SweepBatch)
	if remembered(c, "flight.forget.test") || remembered(c, "wait.forget.test") {
		t.Errorf("lines still remembered a ForgetAfter after their requests ended (in flight %v, waiting %v)",
			remembered(c, "flight.forget.test"), remembered(c, "wait.forget.test"))
	}

	// Forgetting the line forgot nothing of the origin's rules: they are in Redis.
	until, why, err := c.PausedUntil("wait.forget.test")
	if err != nil || why != "maintenance" || until.Before(time.Now().Add(50*time.Minute)) {
		t.Errorf("PausedUntil after the line was forgotten = %v, %q, %v; want the hour's maintenance pause", until, why, err)
	}
}

// ForgetAfter < 0 keeps every line for the life of the clock.
func TestNegativeForgetAfterKeepsEveryLine(t *testing.T) {
	srv := redistest.Start(t)
	m := &manualNow{}
	c := testClock(t, srv, hostclock.Config{LatencyFactor: -1, ForgetAfter: -1})
	c.now = m.now
	for range 20 {
		useOthers(t, c, 1)
		m.advance(time.Hour)
	}
	if n := linesKept(c); n != 20 {
		t.Errorf("with ForgetAfter -1 the clock keeps %d of 20 lines", n)
	}
}
