package backoff_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/backoff"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/origin"
)

type answer struct {
	status     int
	retryAfter string
	body       string
}

// script is a server that answers the n-th request with answers[n] (the last one repeats) and
// records arrivals and request bodies.
type script struct {
	*httptest.Server
	key    string
	mu     sync.Mutex
	at     []time.Time
	bodies []string
}

func newScript(t *testing.T, answers ...answer) *script {
	s := &script{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.at = append(s.at, time.Now())
		s.bodies = append(s.bodies, string(b))
		a := answers[min(len(s.at), len(answers))-1]
		s.mu.Unlock()
		if a.retryAfter != "" {
			w.Header().Set("Retry-After", a.retryAfter)
		}
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	t.Cleanup(s.Close)
	u, _ := url.Parse(s.URL)
	s.key, _ = origin.BudgetKey(u)
	return s
}

func (s *script) arrivals() []time.Time {
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
	if e.Type == events.Retried {
		r.ev = append(r.ev, e)
	}
}

func (r *recorder) retried() []events.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]events.Event(nil), r.ev...)
}

const pause = 300 * time.Millisecond

// stack builds the door's bottom: backoff above the host clock, with a fast authorised rate and a
// fixed backoff of 300 ms, so that the gaps seen come from the pauses.
func stack(t *testing.T, s *script, o backoff.Options) (*http.Client, *hostclock.Local, *recorder) {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	c, err := hostclock.NewLocal(hostclock.Config{
		Authorized: map[string]float64{s.key: 100},
		Backoff:    func(backoff.Class, int, func() float64) time.Duration { return pause },
		Logger:     quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	o.Sink, o.Logger = rec, quiet
	return &http.Client{Transport: backoff.Layer(hostclock.Layer(nil, c, hostclock.LayerOptions{}), c, o)}, c, rec
}

func body(t *testing.T, r *http.Response) string {
	t.Helper()
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	return string(b)
}

func TestRetriedRequestSucceeds(t *testing.T) {
	s := newScript(t, answer{503, "", "busy"}, answer{429, "", "slow down"}, answer{200, "", "ok"})
	client, c, rec := stack(t, s, backoff.Options{})
	r, err := client.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	if r.StatusCode != 200 || body(t, r) != "ok" {
		t.Fatalf("caller saw %d, want the retried success", r.StatusCode)
	}
	at := s.arrivals()
	if len(at) != 3 {
		t.Fatalf("%d arrivals, want 3", len(at))
	}
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap < pause {
			t.Errorf("retry %d arrived %v after the previous attempt, before the %v pause", i, gap, pause)
		}
	}
	ev := rec.retried()
	if len(ev) != 2 || ev[0].Status != 503 || ev[1].Status != 429 || ev[0].Reason != hostclock.ReasonBackoff || ev[0].Wait <= 0 {
		t.Fatalf("Retried events = %+v", ev)
	}
	st := c.Stats()[0]
	if st.Requests != 3 || st.Unavailable != 1 || st.TooManyRequests != 1 || st.Pauses != 2 {
		t.Errorf("clock stats %+v: every retry takes a slot and each pause counts once", st)
	}
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	s := newScript(t, answer{429, "1", ""}, answer{200, "", "ok"})
	client, _, rec := stack(t, s, backoff.Options{})
	r, err := client.Get(s.URL)
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("Get = %v, %v", r, err)
	}
	r.Body.Close()
	at := s.arrivals()
	if gap := at[1].Sub(at[0]); gap < time.Second {
		t.Errorf("retry arrived %v after a 429 with Retry-After: 1", gap)
	}
	if ev := rec.retried(); len(ev) != 1 || ev[0].Reason != hostclock.ReasonRetryAfter {
		t.Errorf("Retried events = %+v", ev)
	}
}

func TestNoRetry(t *testing.T) {
	tests := []struct {
		name     string
		answers  []answer
		method   string
		opts     backoff.Options
		arrivals int
		status   int
		body     string
		gaveUp   bool
	}{
		{"POST is not idempotent", []answer{{503, "", "busy"}}, http.MethodPost, backoff.Options{}, 1, 503, "busy", false},
		{"retries are bounded", []answer{{503, "", "busy"}}, http.MethodGet, backoff.Options{MaxRetries: 2}, 3, 503, "busy", false},
		{"retrying can be switched off", []answer{{503, "", "busy"}}, http.MethodGet, backoff.Options{MaxRetries: -1}, 1, 503, "busy", false},
		{"404 is an answer", []answer{{404, "", "gone"}}, http.MethodGet, backoff.Options{}, 1, 404, "gone", false},
		{"500 is not retried", []answer{{500, "", "oops"}}, http.MethodGet, backoff.Options{}, 1, 500, "oops", false},
		{"Retry-After beyond the ceiling", []answer{{429, "90000", "tomorrow"}}, http.MethodGet, backoff.Options{}, 1, 429, "tomorrow", true},
		{"pause longer than MaxWait", []answer{{503, "5", "later"}}, http.MethodGet, backoff.Options{MaxWait: time.Second}, 1, 503, "later", false},
		{"a long body is kept when not retrying", []answer{{503, "5", strings.Repeat("z", 100<<10)}}, http.MethodGet, backoff.Options{MaxWait: time.Second}, 1, 503, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newScript(t, tt.answers...)
			client, c, _ := stack(t, s, tt.opts)
			req, _ := http.NewRequest(tt.method, s.URL, nil)
			r, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if r.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", r.StatusCode, tt.status)
			}
			if tt.body != "" {
				if got := body(t, r); got != tt.body {
					t.Fatalf("body %q, want %q", got, tt.body)
				}
			} else {
				b, err := io.ReadAll(r.Body)
				r.Body.Close()
				if len(b) != 64<<10 || err == nil {
					t.Fatalf("long body: %d bytes kept, err %v; want the first 64 KiB and an error saying the rest was dropped", len(b), err)
				}
			}
			if n := len(s.arrivals()); n != tt.arrivals {
				t.Fatalf("%d arrivals, want %d", n, tt.arrivals)
			}
			_, _, gerr := c.PausedUntil(s.key)
			if gave := gerr != nil; gave != tt.gaveUp {
				t.Fatalf("origin given up = %v (%v), want %v", gave, gerr, tt.gaveUp)
			}
		})
	}
}

func TestRetryResendsTheBody(t *testing.T) {
	s := newScript(t, answer{503, "", ""}, answer{200, "", "ok"})
	client, _, _ := stack(t, s, backoff.Options{})
	req, _ := http.NewRequest(http.MethodGet, s.URL, strings.NewReader("query"))
	r, err := client.Do(req)
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("Do = %v, %v", r, err)
	}
	r.Body.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.bodies) != 2 || s.bodies[1] != "query" {
		t.Fatalf("bodies received %q, want the body sent again", s.bodies)
	}
}

func TestCancelWhileWaitingToRetry(t *testing.T) {
	s := newScript(t, answer{429, "30", ""})
	client, _, _ := stack(t, s, backoff.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	start := time.Now()
	_, err := client.Do(req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Do = %v, want the context's deadline while waiting to retry", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("cancellation took %v", d)
	}
	if n := len(s.arrivals()); n != 1 {
		t.Fatalf("%d arrivals, want 1", n)
	}
}

// Without a clock nothing would hold a retry until the pause ends, so the layer retries nothing.
func TestWithoutAClockNothingIsRetried(t *testing.T) {
	s := newScript(t, answer{429, "1", "slow down"}, answer{200, "", "ok"})
	client := &http.Client{Transport: backoff.Layer(nil, nil, backoff.Options{Logger: slog.New(slog.DiscardHandler)})}
	r, err := client.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	if r.StatusCode != http.StatusTooManyRequests || body(t, r) != "slow down" {
		t.Errorf("got %d, want the 429 passed through", r.StatusCode)
	}
	if n := len(s.arrivals()); n != 1 {
		t.Errorf("%d arrivals, want 1", n)
	}
}
