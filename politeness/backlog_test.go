package politeness

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/kind"
)

func TestBacklogNoticeOncePerCrossing(t *testing.T) {
	sink := &eventLog{}
	reg := newPendingRequests(sink)
	var waiting []*pending
	grow := func(to int) {
		for len(waiting) < to {
			p := reg.add(context.Background())
			waiting = append(waiting, p)
		}
	}
	shrink := func(to int) {
		for len(waiting) > to {
			reg.remove(waiting[len(waiting)-1])
			waiting = waiting[:len(waiting)-1]
		}
	}
	notices := func() int { return len(sink.of(events.Notice)) }
	steps := []struct {
		name    string
		do      func()
		notices int
	}{
		{"at the threshold", func() { grow(backlogNotice) }, 0},
		{"one above", func() { grow(backlogNotice + 1) }, 1},
		{"further above", func() { grow(backlogNotice + 500) }, 1},
		{"back below, hovering", func() { shrink(backlogNotice - 10); grow(backlogNotice + 10) }, 1},
		{"down to three quarters, then above again", func() { shrink(backlogNotice * 3 / 4); grow(backlogNotice + 1) }, 2},
		{"a request reaching the wire leaves the backlog", func() {
			shrink(backlogNotice * 3 / 4)
			grow(backlogNotice + 1)
			reg.left(waiting[0]) // on the wire now: 1000 wait
			grow(backlogNotice + 1)
		}, 3},
	}
	for _, s := range steps {
		s.do()
		if got := notices(); got != s.notices {
			t.Fatalf("%s: %d notices, want %d", s.name, got, s.notices)
		}
	}
	if e := sink.of(events.Notice)[0]; e.Reason != "backlog" || e.Detail == "" {
		t.Errorf("notice %+v, want reason backlog and a detail", e)
	}
}

// An Async Colly collector visiting faster than its origin allows leaves one goroutine per
// request waiting inside the door. Here 1,100 requests wait for a start slot a clock never
// grants: the door says so once, and Stop releases them all.
func TestBacklogNoticeFromTheDoor(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "User-agent: *\nAllow: /\n")
	}))
	defer srv.Close()
	noticed := make(chan events.Event, 10)
	d := testDoor(t, srv, func(p *Policy) {
		p.Clock = &pagesHeld{Clock: p.Clock}
		p.Events = &events.Bus{}
		p.Events.Subscribe(func(e events.Event) {
			if e.Type == events.Notice && e.Reason == "backlog" {
				noticed <- e
			}
		})
	})
	const n = backlogNotice + 100
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := d.Client().Get(srv.URL + "/page")
			if err == nil {
				resp.Body.Close()
			}
			errs <- err
		})
	}
	select {
	case <-noticed:
	case <-time.After(time.Minute):
		t.Fatal("no backlog notice")
	}
	d.Stop()
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, ErrStopped) {
			t.Fatalf("a waiting request ended with %v, want ErrStopped", err)
		}
	}
	if extra := len(noticed); extra != 0 {
		t.Errorf("%d more backlog notices, want one per crossing", extra)
	}
}

// pagesHeld is a clock that never grants a page a slot; robots.txt goes through.
type pagesHeld struct{ hostclock.Clock }

func (c *pagesHeld) Acquire(ctx context.Context, key string, k kind.Kind) (hostclock.Lease, error) {
	if k != kind.Robots {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	return c.Clock.Acquire(ctx, key, k)
}
