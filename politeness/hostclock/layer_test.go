package hostclock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/internal/startby"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// site is an httptest server that records when requests arrive and answers with handle.
type site struct {
	*httptest.Server
	key    string
	mu     sync.Mutex
	at     []time.Time
	handle func(w http.ResponseWriter, r *http.Request, n int)
}

func newSite(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, n int)) *site {
	s := &site{handle: handle}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.at = append(s.at, time.Now())
		n := len(s.at)
		s.mu.Unlock()
		s.handle(w, r, n)
	}))
	t.Cleanup(s.Close)
	u, _ := url.Parse(s.URL)
	s.key, _ = origin.BudgetKey(u)
	return s
}

func (s *site) arrivals() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.at...)
}

type recorder struct {
	mu sync.Mutex
	ev []events.Event
}

func (r *recorder) Emit(e events.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ev = append(r.ev, e)
}

func (r *recorder) of(typ events.Type) []events.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []events.Event
	for _, e := range r.ev {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestLayerHoldsTheSlotUntilTheBodyIsDone(t *testing.T) {
	finishes := []struct {
		name   string
		finish func(*http.Response)
	}{
		{"closed unread", func(r *http.Response) { r.Body.Close() }},
		{"read to EOF without Close", func(r *http.Response) { io.ReadAll(r.Body) }},
	}
	for _, f := range finishes {
		t.Run(f.name, func(t *testing.T) {
			s := newSite(t, func(w http.ResponseWriter, r *http.Request, n int) { io.WriteString(w, strings.Repeat("x", 1000)) })
			c, m := newTestLocal(t, Config{Authorized: map[string]float64{s.key: 1000}, Concurrency: 1})
			client := &http.Client{Transport: Layer(nil, c, LayerOptions{})}
			first, err := client.Get(s.URL)
			if err != nil {
				t.Fatal(err)
			}
			second := make(chan error, 1)
			go func() {
				r, err := client.Get(s.URL)
				if err == nil {
					r.Body.Close()
				}
				second <- err
			}()
			// The second request waits in the clock for the place (its timer is the first lease's
			// expiry); had the layer let it through, it would never wait on a timer.
			if d := blocked(t, m); d != DefaultLeaseTTL {
				t.Fatalf("the second request waits %v, want the first lease's expiry", d)
			}
			if n := len(s.arrivals()); n != 1 {
				t.Fatalf("%d requests arrived while the only slot was held by an open body", n)
			}
			f.finish(first)
			if err := await(t, m, second); err != nil {
				t.Fatal(err)
			}
			if n := len(s.arrivals()); n != 2 {
				t.Fatalf("%d requests arrived, want 2", n)
			}
		})
	}
}

// The timeout counts from the grant: a request that waited longer than its timeout for its turn
// still gets its full timeout on the wire, and a slow answer is cut off by it.
func TestLayerTimeoutStartsAtGrant(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.URL.Path == "/slow" {
			<-r.Context().Done()
			return
		}
		io.WriteString(w, "ok")
	})
	c, err := NewLocal(Config{Rate: 2, Logger: quiet()}) // 520 ms between starts
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: Layer(nil, c, LayerOptions{Timeout: 250 * time.Millisecond})}
	for i := range 2 {
		r, err := client.Get(s.URL)
		if err != nil {
			t.Fatalf("request %d, which waited about twice its timeout for its slot: %v", i, err)
		}
		io.ReadAll(r.Body)
		r.Body.Close()
	}
	if _, err := client.Get(s.URL + "/slow"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow request: %v, want a deadline error", err)
	}
	st := c.Stats()[0]
	if st.TransportErrors != 1 || st.Pauses != 1 || st.Waits != 2 {
		t.Errorf("stats %+v: want the timeout counted and paused for, and two waits", st)
	}
}

func TestLayerWithTimeoutReplacesTheLayersTimeout(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request, n int) {
		select {
		case <-r.Context().Done():
		case <-time.After(300 * time.Millisecond):
			io.WriteString(w, "late")
		}
	})
	c, err := NewLocal(Config{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	get := func(rt http.RoundTripper, ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
		resp, err := rt.RoundTrip(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		return err
	}
	timed := Layer(nil, c, LayerOptions{Timeout: 10 * time.Second})
	if err := get(timed, WithTimeout(context.Background(), 50*time.Millisecond)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WithTimeout(50ms) on a 300 ms answer: %v, want a deadline error", err)
	}
	if err := get(timed, context.Background()); err != nil {
		t.Errorf("without WithTimeout the layer's 10 s apply: %v", err)
	}
	untimed := Layer(nil, c, LayerOptions{})
	if err := get(untimed, WithTimeout(context.Background(), 50*time.Millisecond)); err != nil {
		t.Errorf("a layer without a timeout leaves the request unbounded: %v", err)
	}
}

func TestLayerRetryAfterPausesTheOriginOnly(t *testing.T) {
	throttled := newSite(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	})
	other := newSite(t, func(w http.ResponseWriter, r *http.Request, n int) {})
	c, err := NewLocal(Config{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	client := &http.Client{Transport: Layer(nil, c, LayerOptions{Sink: rec})}
	get := func(u string) {
		t.Helper()
		r, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
	}
	get(throttled.URL)
	get(other.URL) // another origin: no wait at all
	get(throttled.URL)
	at, oat := throttled.arrivals(), other.arrivals()
	if gap := at[1].Sub(at[0]); gap < time.Second {
		t.Errorf("second request arrived %v after the 429 with Retry-After: 1", gap)
	}
	if oat[0].Sub(at[0]) > 500*time.Millisecond {
		t.Errorf("the other origin was held back %v", oat[0].Sub(at[0]))
	}
	paused := rec.of(events.Paused)
	if len(paused) != 1 || paused[0].Reason != ReasonRetryAfter || paused[0].Origin != throttled.key || paused[0].Status != 429 {
		t.Fatalf("Paused events = %+v", paused)
	}
	waited := rec.of(events.Waited)
	if len(waited) != 1 || waited[0].Reason != ReasonRetryAfter || waited[0].Wait < 900*time.Millisecond || waited[0].Origin != throttled.key {
		t.Fatalf("Waited events = %+v, want one retry-after wait on the throttled origin", waited)
	}
	if st := c.Stats(); st[0].TooManyRequests+st[1].TooManyRequests != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestLayerRefusesAGivenUpOrigin(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request, n int) { w.WriteHeader(500) })
	c, err := NewLocal(Config{ErrorBudget: 1, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	client := &http.Client{Transport: Layer(nil, c, LayerOptions{Sink: rec})}
	r, err := client.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	_, err = client.Get(s.URL + "/next")
	var gu *GiveUpError
	if !errors.As(err, &gu) {
		t.Fatalf("after the error budget: %v, want a *GiveUpError", err)
	}
	if n := len(s.arrivals()); n != 1 {
		t.Fatalf("%d requests reached a given-up origin", n)
	}
	if p := rec.of(events.Paused); len(p) != 1 || p[0].Reason != ReasonGiveUp {
		t.Errorf("Paused events = %+v, want the give-up reported", p)
	}
	if ref := rec.of(events.Refused); len(ref) != 1 || ref[0].Reason != "budget" || !strings.Contains(ref[0].URL, "/next") {
		t.Errorf("Refused events = %+v", ref)
	}
}

func TestLayerCancelWhileWaiting(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(503)
	})
	c, err := NewLocal(Config{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: Layer(nil, c, LayerOptions{})}
	r, err := client.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	start := time.Now()
	if _, err := client.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting request: %v, want its context's deadline", err)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Fatalf("cancellation took %v", waited)
	}
}

func TestLayerRefusesURLsWithoutAnOrigin(t *testing.T) {
	c, _ := NewLocal(Config{Logger: quiet()})
	rt := Layer(nil, c, LayerOptions{})
	req, _ := http.NewRequest(http.MethodGet, "ftp://files.example/x", nil)
	if _, err := rt.RoundTrip(req); !errors.Is(err, origin.ErrNoHost) {
		t.Fatalf("RoundTrip(ftp) = %v, want ErrNoHost", err)
	}
}

// On a new connection the clock cannot see when the server logged the request, so the window
// counts from the first response byte: a slow first answer moves the fourth start back by as much.
func TestLayerWindowCountsFromTheFirstByteOnANewConnection(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			time.Sleep(400 * time.Millisecond)
		}
	})
	c, err := NewLocal(Config{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: Layer(nil, c, LayerOptions{})}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if r, err := client.Get(s.URL); err == nil {
				io.ReadAll(r.Body)
				r.Body.Close()
			}
		})
	}
	wg.Wait()
	at := s.arrivals()
	if len(at) != 4 {
		t.Fatalf("%d arrivals", len(at))
	}
	// Without the first-byte rule the fourth start would come 3 × 347 ms = 1.04 s after the first.
	if gap := at[3].Sub(at[0]); gap < 1400*time.Millisecond {
		t.Errorf("fourth arrival %v after the first, whose answer took 400 ms; want at least 1.4 s", gap)
	}
}

// A HEAD response has no body to read or close: its place is handed back at once.
func TestLayerFreesTheSlotOfAnAnswerWithoutBody(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request, n int) { io.WriteString(w, "x") })
	c, err := NewLocal(Config{Authorized: map[string]float64{s.key: 1000}, Concurrency: 1, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: Layer(nil, c, LayerOptions{})}
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodHead, s.URL, nil)
		_, err := client.Do(req) // the body is neither read nor closed
		cancel()
		if err != nil {
			t.Fatalf("HEAD %d: %v; the previous HEAD kept the only place", i, err)
		}
	}
}

// A layer without a clock is a wiring mistake, refused when the layer is built rather than
// papered over with some global budget.
func TestLayerRefusesANilClock(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "hostclock.Shared()") {
			t.Fatalf("Layer(nil clock) recovered %v, want a panic that names hostclock.Shared()", r)
		}
	}()
	Layer(nil, nil, LayerOptions{})
}

// throttledSite returns a site that answers status with Retry-After: retryAfter, after one request
// through a layer on a manual-time clock, with the layer's events and client.
func throttledSite(t *testing.T, status int, retryAfter string) (*site, *manual, *recorder, *http.Client) {
	t.Helper()
	s := newSite(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Retry-After", retryAfter)
		w.WriteHeader(status)
	})
	c, m := newTestLocal(t, Config{})
	rec := &recorder{}
	client := &http.Client{Transport: Layer(nil, c, LayerOptions{Sink: rec})}
	r, err := client.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	return s, m, rec, client
}

// The Paused event's wait is read from the clock's time, like the pause itself.
func TestLayerPausedEventUsesTheClocksTime(t *testing.T) {
	_, m, rec, _ := throttledSite(t, http.StatusServiceUnavailable, "120")
	p := rec.of(events.Paused)
	if len(p) != 1 || p[0].Wait != 120*time.Second || !p[0].Until.Equal(m.Now().Add(120*time.Second)) {
		t.Fatalf("Paused events = %+v, want one of exactly 120 s on the clock's time", p)
	}
}

// A request whose deadline comes before the origin's earliest start never reaches the server: the
// caller gets a *WaitTooLongError at once, and the sink a Refused event with reason "deadline".
func TestLayerRefusesARequestWhoseDeadlineComesFirst(t *testing.T) {
	s, m, rec, client := throttledSite(t, http.StatusTooManyRequests, "60")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/next", nil)
	_, err := client.Do(req)
	var tl *WaitTooLongError
	if !errors.As(err, &tl) || tl.Reason != ReasonRetryAfter || !tl.Earliest.Equal(m.Now().Add(time.Minute)) {
		t.Fatalf("GET with a 10 s deadline behind a 60 s Retry-After: %v, want a *WaitTooLongError", err)
	}
	if n := len(s.arrivals()); n != 1 {
		t.Errorf("%d requests reached the server, want only the first", n)
	}
	ref := rec.of(events.Refused)
	if len(ref) != 1 || ref[0].Reason != "deadline" || !strings.Contains(ref[0].URL, "/next") || !ref[0].Until.Equal(tl.Earliest) {
		t.Errorf("Refused events = %+v, want one for /next with reason deadline", ref)
	}
}

// The layer reports an origin slowed by its response time, and its recovery, as Notice events
// with reason "latency". The site's answers take simulated time: the handler moves the clock.
func TestLayerReportsTheLatencySlowdown(t *testing.T) {
	c, m := newTestLocal(t, Config{})
	s := newSite(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 2 {
			m.Advance(slow)
		}
		io.WriteString(w, "ok")
	})
	rec := &recorder{}
	client := &http.Client{Transport: Layer(nil, c, LayerOptions{Sink: rec})}
	for range 8 {
		ch := make(chan error, 1)
		go func() {
			r, err := client.Get(s.URL)
			if err == nil {
				_, err = io.ReadAll(r.Body)
				r.Body.Close()
			}
			ch <- err
		}()
		if err := await(t, m, ch); err != nil {
			t.Fatal(err)
		}
	}
	n := rec.of(events.Notice)
	if len(n) != 2 || n[0].Reason != ReasonLatency || n[0].Wait != latencyGap(2, slow) || !strings.Contains(n[0].Detail, "1.5s") ||
		n[1].Reason != ReasonLatency || !strings.Contains(n[1].Detail, "again") {
		t.Fatalf("Notice events = %+v, want the slowdown (1.5s answers) and the recovery", n)
	}
	waited := rec.of(events.Waited)
	if len(waited) < 2 || waited[0].Reason != ReasonRate || waited[1].Reason != ReasonLatency {
		t.Errorf("Waited events = %+v, want the start after the slow answer waiting for latency", waited)
	}
}

// A request bounded with startby.With fails at once when its origin cannot start before the bound,
// and when it waited in line until the bound; its exchange with the server is not cut by the bound.
func TestLayerStartByBoundsOnlyTheWait(t *testing.T) {
	arrived, answer := make(chan struct{}), make(chan struct{})
	s := newSite(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.URL.Path == "/slow" {
			close(arrived)
			<-answer
		}
	})
	c, err := NewLocal(Config{Logger: quiet(), Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	rt := Layer(nil, c, LayerOptions{})
	get := func(path string, by time.Time) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(startby.With(context.Background(), by), http.MethodGet, s.URL+path, nil)
		return rt.RoundTrip(req)
	}

	// The exchange outlives the bound: the bound is for the wait alone.
	slow := make(chan error, 1)
	go func() {
		resp, err := get("/slow", time.Now().Add(50*time.Millisecond))
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		slow <- err
	}()
	<-arrived
	// Its one place is held: a request bounded 800 ms from now (after the rate's next start)
	// waits in line, then fails.
	if _, err := get("/b", time.Now().Add(800*time.Millisecond)); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, startby.ErrPassed) || !strings.Contains(err.Error(), ReasonConcurrency) {
		t.Errorf("a request waiting in line past its bound got %v, want a deadline error naming the concurrency cap", err)
	}
	close(answer)
	if err := <-slow; err != nil {
		t.Errorf("the slow exchange, started before its bound, failed: %v", err)
	}

	// A pause beyond the bound refuses at once, naming the reason and the wait.
	c.Pause(s.key, time.Now().Add(time.Minute), ReasonRetryAfter)
	var tl *WaitTooLongError
	if _, err := get("/c", time.Now().Add(2*time.Second)); !errors.As(err, &tl) || tl.Reason != ReasonRetryAfter || tl.Wait < 50*time.Second {
		t.Errorf("a request behind a 60 s pause bounded at 2 s got %v, want a WaitTooLongError (retry-after, about 60 s)", err)
	}
	if n := len(s.arrivals()); n != 1 {
		t.Errorf("the server saw %d requests, want only the slow one", n)
	}
}
