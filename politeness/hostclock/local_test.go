package hostclock

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/backoff"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// spaced returns the interval for rate r with the default margin, computed as the clock does.
func spaced(r float64) time.Duration {
	return time.Duration(float64(time.Duration(float64(time.Second)/r)) * (1 + DefaultMargin))
}

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
		{"Crawl-delay stricter than the rate", Config{}, "a.example", 2 * time.Second, spaced(0.5), ReasonCrawlDelay},
		{"Crawl-delay looser than the rate", Config{}, "a.example", 100 * time.Millisecond, spaced(3), ReasonRate},
		{"Crawl-delay capped", Config{MaxFloor: 5 * time.Second}, "a.example", time.Hour, spaced(0.2), ReasonCrawlDelay},
		{"Crawl-delay removed", Config{}, "a.example", -1, spaced(3), ReasonRate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, m := newTestLocal(t, tt.cfg)
			if tt.floor != 0 {
				l.SetFloor(tt.key, 7*time.Second)
				l.SetFloor(tt.key, tt.floor)
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
	l, m := newTestLocal(t, Config{Concurrency: 16})
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
	waitQueue(t, l, "a.example", 11) // all in line before simulated time moves
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

func TestConfigRefusals(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // in the error; "" for no error
	}{
		{"default", Config{}, ""},
		{"rate 3 is allowed", Config{Rate: 3}, ""},
		{"rate above 3 needs authorisation", Config{Rate: 4}, "Config.Authorized"},
		{"negative rate", Config{Rate: -1}, "outside"},
		{"per-origin rate above 3 needs authorisation", Config{Rates: map[string]float64{"a.example": 5}}, "authorisation"},
		{"authorised origin may be given a higher per-origin rate", Config{Authorized: map[string]float64{"a.example": 10}, Rates: map[string]float64{"a.example": 8}}, ""},
		{"authorised 10 does not allow 20", Config{Authorized: map[string]float64{"a.example": 10}, Rates: map[string]float64{"a.example": 20}}, "exceeds"},
		{"authorisation is per origin", Config{Authorized: map[string]float64{"b.example": 10}, Rates: map[string]float64{"a.example": 5}}, "authorisation"},
		{"zero authorised rate", Config{Authorized: map[string]float64{"a.example": 0}}, "positive"},
		{"key with a path", Config{Authorized: map[string]float64{"a.example/x": 10}}, "not a budget key"},
		{"key with a scheme", Config{Authorized: map[string]float64{"https://a.example": 10}}, "not a budget key"},
		{"empty key", Config{Rates: map[string]float64{"": 1}}, "not a budget key"},
		{"negative concurrency", Config{Concurrency: -1}, "Concurrency"},
		{"margin of 1", Config{Margin: 1}, "Margin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewLocal(tt.cfg)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("NewLocal: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("NewLocal error = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

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
	if st := l.Stats()[0]; st.Rate != 3*MinRateFactor {
		t.Errorf("rate after 10×429 = %v, want %v", st.Rate, 3*MinRateFactor)
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

func TestConcurrencyCap(t *testing.T) {
	l, m := newTestLocal(t, Config{Authorized: map[string]float64{"a.example": 1e6}, Concurrency: 2})
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
	r := <-ch // granted by Done itself, with no time passing
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
	waitQueue(t, l, "a.example", 2)
	robots := acquireAsync(l, context.Background(), "a.example", kind.Robots)
	waitQueue(t, l, "a.example", 3)
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

func waitQueue(t *testing.T, l *Local, key string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		q := len(l.origins[key].queue)
		l.mu.Unlock()
		if q == n {
			return
		}
		time.Sleep(50 * time.Microsecond)
	}
	t.Fatalf("queue of %s never reached %d", key, n)
}

func TestExplicitPauseAndStricterWins(t *testing.T) {
	l, m := newTestLocal(t, Config{})
	prevAt := acquire(t, m, l, "a.example").Grant().At
	l.SetFloor("a.example", 2*time.Second)
	l.Pause("a.example", prevAt.Add(5*time.Second), "operator")
	l.Pause("a.example", prevAt.Add(time.Second), "shorter") // never shortens
	until, reason, err := l.PausedUntil("a.example")
	if err != nil || reason != "operator" || !until.Equal(prevAt.Add(5*time.Second)) {
		t.Fatalf("PausedUntil = %v %q %v", until, reason, err)
	}
	gap, why, at := next(t, m, l, prevAt, Outcome{})
	if gap != 5*time.Second || why != "operator" {
		t.Fatalf("after the pause: gap %v (%s), want 5s (operator)", gap, why)
	}
	gap, why, _ = next(t, m, l, at, Outcome{})
	if gap != spaced(0.5) || why != ReasonCrawlDelay {
		t.Fatalf("after the pause: gap %v (%s), want the Crawl-delay floor", gap, why)
	}
	if u, _, _ := l.PausedUntil("a.example"); !u.IsZero() {
		t.Errorf("PausedUntil after the pause = %v, want zero", u)
	}
}

func TestStats(t *testing.T) {
	l, m := newTestLocal(t, Config{})
	for _, o := range []Outcome{{Status: 200}, {Status: 429}, {Status: 503}, {Status: 500}, {Err: errors.New("refused")}, {Status: 200}} {
		acquire(t, m, l, "b.example").Done(o)
	}
	acquire(t, m, l, "a.example").Done(Outcome{})
	l.SetFloor("c.example", 3*time.Second)
	st := l.Stats()
	if len(st) != 3 || st[0].Origin != "a.example" || st[1].Origin != "b.example" || st[2].Origin != "c.example" {
		t.Fatalf("Stats origins = %+v", st)
	}
	b := st[1]
	want := OriginStats{Origin: "b.example", Requests: 6, Waits: 5, TooManyRequests: 1, Unavailable: 1, ServerErrors: 1,
		TransportErrors: 1, Pauses: 4, Rate: 1.5, Waited: b.Waited}
	if b != want {
		t.Errorf("b.example stats = %+v\nwant %+v", b, want)
	}
	if b.Waited <= 0 {
		t.Errorf("Waited = %v", b.Waited)
	}
	if st[2].Floor != 3*time.Second || st[0].Requests != 1 || st[0].Waits != 0 {
		t.Errorf("stats = %+v", st)
	}
}

func TestSharedIsOneClock(t *testing.T) {
	if Shared() != Shared() || Shared() == nil {
		t.Fatal("Shared() is not one process-wide clock")
	}
}

// A request that left late (Lease.Sent) moves the origin's window: three more starts may not
// follow it within one second of when it actually left, with half the margin to spare.
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
	window := time.Duration(3 * float64(time.Second) / 3 * (1 + DefaultMargin/2))
	want := []time.Time{epoch.Add(spaced(3)), epoch.Add(2 * spaced(3)), epoch.Add(100*time.Millisecond + window)}
	for i := range want {
		if !at[i].Equal(want[i]) {
			t.Errorf("start %d at +%v, want +%v", i+1, at[i].Sub(epoch), want[i].Sub(epoch))
		}
	}
}

func TestAuthorizeRaisesOneOriginForEveryUser(t *testing.T) {
	l, m := newTestLocal(t, Config{Rates: map[string]float64{"c.example": 2}})
	spacing := func(key string) time.Duration {
		t.Helper()
		m.Advance(2 * time.Second) // an empty window: only the rate decides the spacing
		first := acquire(t, m, l, key)
		first.Done(Outcome{Status: 200})
		second := acquire(t, m, l, key)
		second.Done(Outcome{Status: 200})
		return second.Grant().At.Sub(first.Grant().At)
	}
	if got := spacing("a.example"); got != spaced(3) {
		t.Fatalf("before authorisation: %v, want %v", got, spaced(3))
	}
	if err := l.Authorize("A.Example:443", 10); err != nil {
		t.Fatal(err)
	}
	if got := spacing("a.example"); got != spaced(10) {
		t.Errorf("an origin already seen, after authorisation: %v, want %v", got, spaced(10))
	}
	if err := l.Authorize("b.example", 10); err != nil {
		t.Fatal(err)
	}
	if got := spacing("b.example"); got != spaced(10) {
		t.Errorf("an origin first seen after authorisation: %v, want %v", got, spaced(10))
	}
	if err := l.Authorize("c.example", 10); err != nil {
		t.Fatal(err)
	}
	if got := spacing("c.example"); got != spaced(2) {
		t.Errorf("a lower configured rate still wins: %v, want %v", got, spaced(2))
	}
	if got := spacing("d.example"); got != spaced(3) {
		t.Errorf("other origins keep the default: %v", got)
	}
	if err := l.Authorize("a.example", 20); err != nil {
		t.Fatal(err)
	}
	if got := spacing("a.example"); got != spaced(10) {
		t.Errorf("a second, higher authorisation: %v, want the lower %v to hold", got, spaced(10))
	}
	if err := l.Authorize("a.example", 5); err != nil {
		t.Fatal(err)
	}
	if got := spacing("a.example"); got != spaced(5) {
		t.Errorf("a lower authorisation: %v, want %v", got, spaced(5))
	}
	for _, bad := range []struct {
		key  string
		rate float64
	}{{"a.example", 0}, {"a.example", -1}, {"a.example/path", 5}, {"", 5}} {
		if err := l.Authorize(bad.key, bad.rate); err == nil {
			t.Errorf("Authorize(%q, %g) accepted", bad.key, bad.rate)
		}
	}
}
