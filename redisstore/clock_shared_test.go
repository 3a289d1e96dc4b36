package redisstore_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/hostclock/clocktest"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/redisstore"
	"github.com/politecrawl/etiquette/redisstore/redistest"
)

const origin = "shared.test"

// authorised is a clock configuration at the table's rate for origin.
func authorised(concurrency int) hostclock.Config {
	return hostclock.Config{Authorized: map[string]float64{origin: clocktest.Rate}, Concurrency: concurrency,
		LatencyFactor: -1, Logger: slog.New(slog.DiscardHandler)}
}

func take(t *testing.T, c hostclock.Clock) hostclock.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	le, err := c.Acquire(ctx, origin, kind.HTML)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	return le
}

func TestProcessesShareOneBudget(t *testing.T) {
	srv := redistest.Start(t)
	clocks := []hostclock.Clock{
		newStore(t, srv, redisstore.Options{Clock: authorised(2)}).Clock(),
		newStore(t, srv, redisstore.Options{Clock: authorised(2)}).Clock(),
	}
	var mu sync.Mutex
	var at []time.Time
	inFlight, most := 0, 0
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	for _, c := range clocks {
		for range 4 {
			wg.Go(func() {
				for {
					le, err := c.Acquire(ctx, origin, kind.HTML)
					if err != nil {
						return
					}
					mu.Lock()
					at = append(at, le.Grant().At)
					inFlight++
					most = max(most, inFlight)
					inFlight--
					mu.Unlock()
					le.Done(hostclock.Outcome{Status: 200})
				}
			})
		}
	}
	wg.Wait()
	slices.SortFunc(at, time.Time.Compare)
	for j := clocktest.Rate; j < len(at); j++ {
		if w := at[j].Sub(at[j-clocktest.Rate]); w < time.Second+hostclock.DefaultJitterMargin-clocktest.Slack {
			t.Errorf("two processes together started %d requests within %v, want at least 1 s + the jitter margin of %v",
				clocktest.Rate+1, w, hostclock.DefaultJitterMargin)
		}
	}
	if len(at) < clocktest.Rate || len(at) > 2*clocktest.Rate {
		t.Errorf("two processes got %d starts in 1.5 s at %d per second for both", len(at), clocktest.Rate)
	}
}

func TestAPlaceIsHeldAcrossProcessesAndFreedAtOnce(t *testing.T) {
	srv := redistest.Start(t)
	opts := redisstore.Options{Clock: authorised(1), LeaseExpiry: 600 * time.Millisecond}
	a := newStore(t, srv, opts).Clock()
	b := newStore(t, srv, opts).Clock()
	waiting := make(chan string, 100)
	redisstore.OnWait(b, func(_ string, _ kind.Kind, reason string) { waiting <- reason })
	held := take(t, a)
	// The holder renews its lease: after three expiries the other process still finds no place.
	ctx, cancel := context.WithTimeout(context.Background(), 3*opts.LeaseExpiry)
	defer cancel()
	if _, err := b.Acquire(ctx, origin, kind.HTML); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("another process got a place while the only one was held: %v", err)
	}
	for len(waiting) > 0 { // the waits of the request that gave up
		<-waiting
	}
	got := make(chan hostclock.Lease, 1)
	go func() {
		le, err := b.Acquire(context.Background(), origin, kind.HTML)
		if err != nil {
			t.Errorf("Acquire: %v", err)
		}
		got <- le
	}()
	for reason := range waiting {
		if reason == hostclock.ReasonConcurrency {
			break
		}
	}
	doneAt := time.Now()
	held.Done(hostclock.Outcome{Status: 200})
	le := <-got
	if le == nil {
		return
	}
	if d := le.Grant().At.Sub(doneAt); d > 700*time.Millisecond {
		t.Errorf("the other process started %v after the place was freed; the freed message should wake it", d)
	}
	if g := le.Grant(); g.Reason != hostclock.ReasonConcurrency {
		t.Errorf("it waited for %q, want concurrency", g.Reason)
	}
	le.Done(hostclock.Outcome{Status: 200})
}

func TestADeadProcessFreesItsPlacesWhenTheirLeasesExpire(t *testing.T) {
	srv := redistest.Start(t)
	opts := redisstore.Options{Clock: authorised(2), LeaseExpiry: 600 * time.Millisecond}
	dying := newStore(t, srv, opts)
	take(t, dying.Clock())
	take(t, dying.Clock())
	diedAt := time.Now()
	dying.Close() // stops renewing, as a killed process would

	survivor := newStore(t, srv, opts).Clock()
	le := take(t, survivor)
	if d := le.Grant().At.Sub(diedAt); d < opts.LeaseExpiry-opts.LeaseExpiry/3-clocktest.Slack || d > opts.LeaseExpiry+time.Second {
		t.Errorf("a place of the dead process was free %v after it died, want within its lease expiry of %v", d, opts.LeaseExpiry)
	}
	le.Done(hostclock.Outcome{Status: 200})
	if st := survivor.Stats(); st[0].Expired == 0 {
		t.Errorf("Stats.Expired = 0, want the dead process's leases counted")
	}
}

func TestA429SeenByOneProcessPausesEveryProcess(t *testing.T) {
	srv := redistest.Start(t)
	a := newStore(t, srv, redisstore.Options{Clock: authorised(2)}).Clock()
	b := newStore(t, srv, redisstore.Options{Clock: authorised(2)}).Clock()
	le := take(t, a)
	le.Done(hostclock.Outcome{Status: 429, RetryAfter: 500 * time.Millisecond})
	p, ok := le.Caused()
	if !ok {
		t.Fatal("the 429 caused no pause")
	}
	if until, why, err := b.PausedUntil(origin); err != nil || why != hostclock.ReasonRetryAfter || until.Sub(p.Until).Abs() > clocktest.Slack {
		t.Errorf("the other process sees the pause until %v (%q, %v), want %v", until, why, err, p.Until)
	}
	next := take(t, b)
	if next.Grant().At.Before(p.Until.Add(-clocktest.Slack)) {
		t.Errorf("the other process started at %v, before the pause's end %v", next.Grant().At, p.Until)
	}
	next.Done(hostclock.Outcome{Status: 200})
	for _, st := range b.Stats() {
		if st.Rate != clocktest.Rate/2 {
			t.Errorf("the other process's rate is %g, want the penalty's %d", st.Rate, clocktest.Rate/2)
		}
	}
}

func TestAGiveUpHoldsForItsCrawlOnly(t *testing.T) {
	srv := redistest.Start(t)
	cfg := authorised(2)
	cfg.MaxRetryAfter = time.Second
	first := newStore(t, srv, redisstore.Options{Crawl: "first", Clock: cfg}).Clock()
	take(t, first).Done(hostclock.Outcome{Status: 503, RetryAfter: time.Hour})
	var gu *hostclock.GiveUpError
	if _, err := newStore(t, srv, redisstore.Options{Crawl: "first", Clock: cfg}).Clock().Earliest(origin); !errors.As(err, &gu) {
		t.Errorf("another process of the same crawl: Earliest = %v, want the give-up", err)
	}
	if _, err := newStore(t, srv, redisstore.Options{Crawl: "second", Clock: cfg}).Clock().Earliest(origin); err != nil {
		t.Errorf("a process of another crawl: Earliest = %v, want the origin available", err)
	}
}

func TestRobotsTxtGoesAheadOfAnotherProcesssPages(t *testing.T) {
	srv := redistest.Start(t)
	pages := newStore(t, srv, redisstore.Options{Clock: authorised(2)}).Clock()
	robots := newStore(t, srv, redisstore.Options{Clock: authorised(2)}).Clock()
	robotsWaits := make(chan struct{}, 100)
	redisstore.OnWait(robots, func(string, kind.Kind, string) { robotsWaits <- struct{}{} })
	pages.Pause(origin, time.Now().Add(300*time.Millisecond), "test")
	order := make(chan kind.Kind, 3)
	for i, w := range []struct {
		c hostclock.Clock
		k kind.Kind
	}{{robots, kind.Robots}, {pages, kind.HTML}, {pages, kind.HTML}} {
		if i == 1 {
			<-robotsWaits // the robots.txt request waits for the pause, as the pages will
		}
		go func() {
			le, err := w.c.Acquire(context.Background(), origin, w.k)
			if err != nil {
				t.Errorf("Acquire: %v", err)
				order <- ""
				return
			}
			order <- w.k
			le.Done(hostclock.Outcome{Status: 200})
		}()
	}
	if first := <-order; first != kind.Robots {
		t.Errorf("the first start after the pause went to %q, want robots.txt", first)
	}
	<-order
	<-order
}

// signalOn is a slog handler that closes a channel at the first record containing text.
type signalOn struct {
	text string
	once sync.Once
	seen chan struct{}
}

func (h *signalOn) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(r.Message, h.text) {
		h.once.Do(func() { close(h.seen) })
	}
	return nil
}

func (h *signalOn) Enabled(context.Context, slog.Level) bool { return true }
func (h *signalOn) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *signalOn) WithGroup(string) slog.Handler            { return h }

func TestWithoutRedisNothingIsGrantedAndTheWaitIsBounded(t *testing.T) {
	srv := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: "s3cret-pass", MaxRetries: -1})
	t.Cleanup(func() { client.Close() })
	st, err := redisstore.New(client, redisstore.Options{Clock: authorised(2), Wait: 400 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv.Stop()
	start := time.Now()
	le, err := st.Clock().Acquire(context.Background(), origin, kind.HTML)
	var ue *redisstore.UnavailableError
	if !errors.As(err, &ue) {
		t.Fatalf("Acquire without Redis = %v, %v; want an *UnavailableError", le, err)
	}
	if d := time.Since(start); d < 400*time.Millisecond-clocktest.Slack {
		t.Errorf("it failed after %v, before the wait of 400ms", d)
	}
	if msg := err.Error(); strings.Contains(msg, "s3cret-pass") || !strings.Contains(msg, "redis://:xxxxx@"+srv.Addr) {
		t.Errorf("the error names the server as %q; want its address without the password", msg)
	}
	if _, err := st.Clock().Earliest(origin); !errors.As(err, &ue) {
		t.Errorf("Earliest without Redis = %v, want an *UnavailableError", err)
	}
}

func TestRedisBackWithinTheWaitLetsTheRequestGo(t *testing.T) {
	srv := redistest.Start(t)
	waiting := &signalOn{text: "Redis cannot be reached", seen: make(chan struct{})}
	st := newStore(t, srv, redisstore.Options{Clock: authorised(2), Wait: 20 * time.Second, Logger: slog.New(waiting)})
	take(t, st.Clock()).Done(hostclock.Outcome{Status: 200})
	srv.Stop()
	got := make(chan error, 1)
	go func() {
		le, err := st.Clock().Acquire(context.Background(), origin, kind.HTML)
		if err == nil {
			le.Done(hostclock.Outcome{Status: 200})
		}
		got <- err
	}()
	<-waiting.seen
	select {
	case err := <-got:
		t.Fatalf("Acquire returned while Redis was away: %v", err)
	default:
	}
	srv.Restart()
	if err := <-got; err != nil {
		t.Fatalf("Acquire after Redis came back: %v", err)
	}
}

func TestEveryKeyIsTaggedWithItsOriginAndExpires(t *testing.T) {
	srv := redistest.Start(t)
	st := newStore(t, srv, redisstore.Options{Crawl: "tagged", Clock: authorised(2)})
	q := st.Queue()
	if err := q.Init(); err != nil {
		t.Fatal(err)
	}
	if _, err := q.AddRequest(origin, entry("http://"+origin+"/a"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := q.AddRequest(origin, entry("http://"+origin+"/b"), 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := q.GetRequest(origin); err != nil {
		t.Fatal(err)
	}
	c := st.Clock()
	held := take(t, c)
	defer held.Done(hostclock.Outcome{Status: 200})
	c.SetFloor(origin, "robots.txt", 100*time.Millisecond)
	c.Pause(origin, time.Now().Add(time.Minute), "test")
	ctx := context.Background()
	keys, err := srv.Client().Keys(ctx, "*").Result()
	if err != nil || len(keys) < 4 {
		t.Fatalf("KEYS = %v, %v", keys, err)
	}
	crawl := redisstore.CrawlPrefix("tagged")
	for _, k := range keys {
		if !strings.HasPrefix(k, redisstore.Namespace+"{"+origin+"}:") && !strings.HasPrefix(k, crawl+"{"+origin+"}:") &&
			k != crawl+"origins" && k != crawl+"started" {
			t.Errorf("key %q does not carry the origin's hash tag, in the shared namespace or the crawl's prefix", k)
		}
		if ttl, err := srv.Client().PTTL(ctx, k).Result(); err != nil || ttl <= 0 {
			t.Errorf("key %q has no expiry (%v, %v): a dead process would leave it behind", k, ttl, err)
		}
	}
}

func TestOptionsARefusedWithAReason(t *testing.T) {
	srv := redistest.Start(t)
	for _, tt := range []struct {
		name string
		opts redisstore.Options
		want string
	}{
		{"injected time", redisstore.Options{Clock: hostclock.Config{Time: hostclock.SystemTime()}}, "Redis server's clock"},
		{"a prefix with a hash tag", redisstore.Options{Prefix: "crawl:{x}:"}, "hash tag"},
		{"an unauthorised rate", redisstore.Options{Clock: hostclock.Config{Rate: 5}}, "RRZE"},
		{"a negative wait", redisstore.Options{Wait: -time.Second}, "negative"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := redisstore.New(srv.Client(), tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

func TestRedactedNamesTheServerWithoutItsPassword(t *testing.T) {
	for _, tt := range []struct {
		opts redis.Options
		want string
	}{
		{redis.Options{Addr: "127.0.0.1:6379"}, "redis://127.0.0.1:6379/0"},
		{redis.Options{Addr: "r.example:6380", Password: "secret", DB: 2}, "redis://:xxxxx@r.example:6380/2"},
		{redis.Options{Addr: "r.example:6380", Username: "crawler", Password: "secret"}, "redis://crawler:xxxxx@r.example:6380/0"},
		{redis.Options{Addr: "r.example:6380", Username: "crawler"}, "redis://crawler@r.example:6380/0"},
	} {
		if got := redisstore.Redacted(&tt.opts); got != tt.want {
			t.Errorf("Redacted(%+v) = %q, want %q", tt.opts, got, tt.want)
		}
	}
}

func TestStatsCountEveryProcessOfTheCrawl(t *testing.T) {
	srv := redistest.Start(t)
	a := newStore(t, srv, redisstore.Options{Crawl: "counted", Clock: authorised(2)}).Clock()
	b := newStore(t, srv, redisstore.Options{Crawl: "counted", Clock: authorised(2)}).Clock()
	take(t, a).Done(hostclock.Outcome{Status: 200})
	take(t, b).Done(hostclock.Outcome{Status: 200})
	take(t, b).Done(hostclock.Outcome{Status: 429, RetryAfter: 100 * time.Millisecond})
	for name, c := range map[string]hostclock.Clock{"a": a, "b": b} {
		st := c.Stats()
		if len(st) != 1 || st[0].Requests != 3 || st[0].TooManyRequests != 1 || st[0].Pauses != 1 {
			t.Errorf("process %s's Stats = %+v; want the crawl's 3 requests, one 429 and its pause", name, st)
		}
	}
	// Another crawl on the same Redis shares the origin's budget, not this crawl's counters.
	other := newStore(t, srv, redisstore.Options{Crawl: "other", Clock: authorised(2)}).Clock()
	if _, err := other.Earliest(origin); err != nil {
		t.Fatal(err)
	}
	if st := other.Stats(); len(st) != 1 || st[0].Requests != 0 || st[0].Rate != clocktest.Rate/2 {
		t.Errorf("another crawl's Stats = %+v; want no requests of its own and the origin's shared rate after the 429", st)
	}
}
