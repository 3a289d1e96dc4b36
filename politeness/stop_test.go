package politeness

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/robots"
)

func TestStopCancelsWaitingRequestsAndLetsTheWireFinish(t *testing.T) {
	slowArrived, finishSlow := make(chan struct{}), make(chan struct{})
	var throttled atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
		case "/slow":
			close(slowArrived)
			<-finishSlow
			io.WriteString(w, "done")
		case "/throttled":
			throttled.Add(1)
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	retryWaits := make(chan struct{}, 4)
	d := testDoor(t, srv, func(p *Policy) {
		p.Events = &events.Bus{}
		p.Events.Subscribe(func(e events.Event) {
			if e.Type == events.Retried {
				retryWaits <- struct{}{} // the 429 is closed; the re-send waits out Retry-After
			}
		})
	})
	type result struct {
		body string
		err  error
	}
	get := func(path string) chan result {
		ch := make(chan result, 1)
		go func() {
			resp, err := d.Client().Get(srv.URL + path)
			if err != nil {
				ch <- result{err: err}
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			ch <- result{string(b), err}
		}()
		return ch
	}
	slow := get("/slow")
	<-slowArrived
	retrying := get("/throttled") // answered 429 with Retry-After: 30; the retry waits for the pause
	<-retryWaits

	d.Stop()
	select {
	case r := <-retrying:
		if !errors.Is(r.err, ErrStopped) {
			t.Errorf("the request waiting for its retry: %v, want ErrStopped", r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not cancel the request waiting out Retry-After")
	}
	close(finishSlow)
	if r := <-slow; r.err != nil || r.body != "done" {
		t.Errorf("the request on the wire: %q, %v; want it to finish", r.body, r.err)
	}
	if _, err := d.Client().Get(srv.URL + "/after"); !errors.Is(err, ErrStopped) {
		t.Errorf("a request after Stop: %v, want ErrStopped", err)
	}
	if n := throttled.Load(); n != 1 {
		t.Errorf("the throttled page reached the site %d times, want once", n)
	}
}

// Stop is called while a 429's body is still arriving: Stop leaves it (it is on the wire), but
// the retry that would follow must not then wait out the Retry-After.
func TestStopWhileA429IsArrivingCancelsItsRetry(t *testing.T) {
	headersSent, finishBody := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		w.Header().Set("Retry-After", "10")
		w.WriteHeader(http.StatusTooManyRequests)
		w.(http.Flusher).Flush()
		close(headersSent)
		<-finishBody
		io.WriteString(w, "slow down")
	}))
	defer srv.Close()
	d := testDoor(t, srv, nil)
	done := getAsync(d, srv.URL+"/a")
	<-headersSent
	stopped := time.Now()
	d.Stop()
	close(finishBody)
	select {
	case err := <-done:
		if !errors.Is(err, ErrStopped) {
			t.Errorf("got %v, want ErrStopped", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the retry still waited for Retry-After %v after Stop", time.Since(stopped))
	}
}

// robots.txt fetches belong to the keeper every door shares: stopping the door that happened to
// start one must not leave a false "unreachable" for another door waiting on the same fetch.
func TestStoppingOneDoorDoesNotFailAnothersRobotsTxt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	clock, err := hostclock.NewLocal(hostclock.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	keeper := robots.NewKeeper(robots.Options{})
	held := &heldRobots{Clock: clock, waiting: make(chan struct{}), release: make(chan struct{})}
	shared := func(p *Policy) { p.Clock, p.Robots = held, keeper }
	a, b := testDoor(t, srv, shared), testDoor(t, srv, shared)
	aDone := getAsync(a, srv.URL+"/a") // starts the robots.txt fetch, which waits for its turn
	<-held.waiting
	a.Stop()
	if err := <-aDone; !errors.Is(err, ErrStopped) {
		t.Errorf("door A after Stop: %v, want ErrStopped", err)
	}
	close(held.release)
	resp, err := b.Client().Get(srv.URL + "/b")
	if err != nil {
		t.Fatalf("door B failed after door A stopped: %v", err)
	}
	resp.Body.Close()
}

// A page waiting for robots.txt is not "on the wire" while robots.txt's body arrives.
func TestStopWhileRobotsTxtArrivesCancelsTheWaitingPage(t *testing.T) {
	headersSent, finishBody := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			close(headersSent)
			<-finishBody
			io.WriteString(w, "User-agent: *\nCrawl-delay: 5\n")
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	defer close(finishBody)
	d := testDoor(t, srv, nil)
	done := getAsync(d, srv.URL+"/a")
	<-headersSent
	d.Stop()
	select {
	case err := <-done:
		if !errors.Is(err, ErrStopped) {
			t.Errorf("got %v, want ErrStopped", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the page still waited after Stop")
	}
}

// heldRobots is a clock that holds robots.txt requests at Acquire until release is closed (or
// their context ends), and says on waiting when the first one arrives.
type heldRobots struct {
	hostclock.Clock
	once             sync.Once
	waiting, release chan struct{}
}

func (h *heldRobots) Acquire(ctx context.Context, key string, k kind.Kind) (hostclock.Lease, error) {
	if k == kind.Robots {
		h.once.Do(func() { close(h.waiting) })
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	return h.Clock.Acquire(ctx, key, k)
}

// getAsync sends a GET through d in the background; the channel gets its error once the response
// is closed.
func getAsync(d *Door, url string) chan error {
	done := make(chan error, 1)
	go func() {
		resp, err := d.Client().Get(url)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	return done
}
