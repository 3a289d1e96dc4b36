package politeness

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestStopCancelsWaitingRequestsAndLetsTheWireFinish(t *testing.T) {
	slowArrived, throttledArrived := make(chan struct{}), make(chan struct{}, 4)
	var throttled atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
		case "/slow":
			close(slowArrived)
			time.Sleep(500 * time.Millisecond)
			io.WriteString(w, "done")
		case "/throttled":
			throttled.Add(1)
			throttledArrived <- struct{}{}
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	d := testDoor(t, srv, nil)
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
	<-throttledArrived
	time.Sleep(100 * time.Millisecond)

	d.Stop()
	select {
	case r := <-retrying:
		if !errors.Is(r.err, ErrStopped) {
			t.Errorf("the request waiting for its retry: %v, want ErrStopped", r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not cancel the request waiting out Retry-After")
	}
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
