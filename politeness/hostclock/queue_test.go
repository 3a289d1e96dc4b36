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

func TestConcurrencyCap(t *testing.T) {
	// The held leases last a simulated second: the response time's interval is off, or it would
	// hold the third request back once a place is free.
	l, m := newTestLocal(t, Config{Authorized: map[string]float64{"a.example": 1e6}, Concurrency: 2, LatencyFactor: -1})
	a := acquire(t, m, l, "a.example")
	b := acquire(t, m, l, "a.example")
	ch := acquireAsync(l, context.Background(), "a.example", kind.HTML)
	if d := blocked(t, m); d != DefaultLeaseTTL-(m.Now().Sub(b.Grant().At))-(b.Grant().At.Sub(a.Grant().At)) {
		t.Fatalf("third request waits on a timer of %v, want the first lease's expiry", d)
	}
	select {
	case r := <-ch:
		t.Fatalf("a third request started with two in flight: %+v", r)
	default:
	}
	m.Advance(time.Second)
	b.Done(Outcome{Status: 200})
	r := receive(t, ch) // granted by Done itself, with no time passing
	if r.err != nil || r.lease.Grant().Reason != ReasonConcurrency || r.lease.Grant().Wait != time.Second {
		t.Fatalf("third request: %+v %v, want a 1 s wait for concurrency", r.lease.Grant(), r.err)
	}
	a.Done(Outcome{})
	b.Done(Outcome{}) // a second Done is a no-op
	r.lease.Done(Outcome{})
}

func TestLeaseExpires(t *testing.T) {
	l, m := newTestLocal(t, Config{Concurrency: 1, LeaseTTL: time.Minute})
	acquire(t, m, l, "a.example") // never done: a leaked body
	le := acquire(t, m, l, "a.example")
	if g := le.Grant(); g.Wait != time.Minute || g.Reason != ReasonConcurrency {
		t.Fatalf("second lease: %+v, want granted when the first expired after 1 m", g)
	}
	if st := l.Stats()[0]; st.Expired != 1 {
		t.Errorf("Expired = %d, want 1", st.Expired)
	}
}

func TestCancelWhileWaiting(t *testing.T) {
	l, m := newTestLocal(t, Config{})
	acquire(t, m, l, "a.example").Done(Outcome{Status: 503})
	ctx, cancel := context.WithCancel(context.Background())
	ch := acquireAsync(l, ctx, "a.example", kind.HTML)
	blocked(t, m)
	cancel()
	r := <-ch
	if !errors.Is(r.err, context.Canceled) || !strings.Contains(r.err.Error(), ReasonBackoff) {
		t.Fatalf("Acquire = %v, want context.Canceled while waiting for the backoff", r.err)
	}
	// The cancelled waiter left the line: the next request is served when the pause ends.
	le := acquire(t, m, l, "a.example")
	if g := le.Grant(); g.Wait != backoff.ThrottledBackoff().Base {
		t.Fatalf("next request waited %v, want the pause of %v", g.Wait, backoff.ThrottledBackoff().Base)
	}
	if _, err := l.Acquire(ctx, "a.example", kind.HTML); !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire with a cancelled context = %v", err)
	}
}

func TestRobotsGoesFirst(t *testing.T) {
	l, m := newTestLocal(t, Config{})
	acquire(t, m, l, "a.example").Done(Outcome{})
	page := acquireAsync(l, context.Background(), "a.example", kind.HTML)
	blocked(t, m)
	page2 := acquireAsync(l, context.Background(), "a.example", kind.HTML)
	waitQueue(t, m, l, "a.example", 2)
	robots := acquireAsync(l, context.Background(), "a.example", kind.Robots)
	waitQueue(t, m, l, "a.example", 3)
	var at []time.Time
	for _, ch := range []<-chan result{robots, page, page2} {
		r := await(t, m, ch)
		at = append(at, r.lease.Grant().At)
		r.lease.Done(Outcome{})
	}
	if !at[0].Before(at[1]) || !at[1].Before(at[2]) {
		t.Fatalf("starts: robots.txt %v, first page %v, second page %v; want robots.txt ahead of the waiting pages, pages in order", at[0], at[1], at[2])
	}
}
