package politeness

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/internal/startby"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// A person's request waits for its origin up to Policy.MaxWait, counted from when it entered the
// door, across its redirect hops: a hop that could start only after the bound is refused at
// once, and so is a request to an origin paused beyond it — before robots.txt is asked for.
func TestUserTriggeredWaitIsBoundedAcrossHops(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	origin := site.NewOrigin().Robots("User-agent: *\nCrawl-delay: 1\n").
		Serve("/moved", etiquettetest.Redirect(http.StatusFound, "/target")).
		Otherwise(etiquettetest.Text("ok"))
	var clock hostclock.Clock
	d := testDoorAt(t, origin.Addr(), func(p *Policy) {
		p.Mode, p.MaxWait = UserTriggered, 1500*time.Millisecond
		clock = p.Clock
	})

	// robots.txt starts at once, /moved a Crawl-delay (1 s and a margin) later, inside the
	// bound; /target another second later, after the bound of 1.5 s from the start.
	_, err := d.Client().Get(origin.URL + "/moved")
	var tl *hostclock.WaitTooLongError
	if !errors.As(err, &tl) || tl.Reason != hostclock.ReasonCrawlDelay {
		t.Fatalf("the hop got %v; want a WaitTooLongError (crawl-delay): the bound counts from the first request", err)
	}
	if !strings.Contains(err.Error(), "Policy.MaxWait") {
		t.Errorf("the refusal does not say which setting bounds the wait: %v", err)
	}
	if paths := etiquettetest.Paths(origin.Requests()); len(paths) != 2 || paths[1] != "/moved" {
		t.Errorf("the site saw %q, want robots.txt and /moved only", paths)
	}

	// A pause beyond the bound refuses a new request before it reaches anything.
	clock.Pause(origin.Addr(), time.Now().Add(time.Minute), hostclock.ReasonRetryAfter)
	before := d.Stats()
	if _, err := d.Client().Get(origin.URL + "/other"); !errors.As(err, &tl) || tl.Reason != hostclock.ReasonRetryAfter || tl.Wait < 50*time.Second {
		t.Errorf("a request to an origin paused for a minute got %v; want a WaitTooLongError (retry-after, about 60 s)", err)
	}
	if after := d.Stats(); after.Refused["deadline"] != before.Refused["deadline"]+1 {
		t.Errorf("the refusal was not counted: %v refused before, %v after", before.Refused, after.Refused)
	}
	// A caller's own later bound does not stretch Policy.MaxWait.
	req, _ := http.NewRequestWithContext(startby.With(context.Background(), time.Now().Add(time.Hour)), http.MethodGet, origin.URL+"/other", nil)
	if _, err := d.Client().Do(req); !errors.As(err, &tl) || tl.Reason != hostclock.ReasonRetryAfter {
		t.Errorf("a request with its own bound an hour away, to an origin paused for a minute, got %v; want the same refusal", err)
	}
}

// A person's request waits for robots.txt only until its bound: a robots.txt that does not come
// fails the request then, with a deadline error, while the shared fetch goes on for the others.
func TestUserTriggeredWaitForRobotsTxtIsBounded(t *testing.T) {
	release := make(chan struct{})
	site := etiquettetest.NewSite()
	defer site.Close()
	defer close(release)
	origin := site.NewOrigin().Serve("/robots.txt", etiquettetest.Text("").HoldUntil(release)).
		Otherwise(etiquettetest.Text("ok"))
	d := testDoorAt(t, origin.Addr(), func(p *Policy) { p.Mode, p.MaxWait = UserTriggered, 300*time.Millisecond })

	done := make(chan error, 1)
	go func() {
		_, err := d.Client().Get(origin.URL + "/page")
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrMaxWaitPassed) || !strings.Contains(err.Error(), "robots.txt") {
			t.Errorf("the request waiting for a robots.txt that does not come got %v; want a deadline error about robots.txt", err)
		}
	case <-time.After(20 * time.Second): // bound for a loaded machine; the robots.txt never comes
		t.Fatal("the request still waits for robots.txt long after its 300 ms bound")
	}
	if paths := etiquettetest.Paths(origin.Requests()); len(paths) != 1 || paths[0] != "/robots.txt" {
		t.Errorf("the site saw %q, want only the robots.txt request", paths)
	}
}

// A request that started within its bound and then timed out waiting for the answer is not a wait
// cut by the bound: its error is not marked ErrMaxWaitPassed (what tells a caller, such as
// `etiquette fetch`, that Policy.MaxWait ended it).
func TestUserTriggeredSlowAnswerIsNotAWaitCutByTheBound(t *testing.T) {
	release := make(chan struct{})
	site := etiquettetest.NewSite()
	defer site.Close()
	defer close(release)
	origin := site.NewOrigin().Serve("/slow", etiquettetest.Text("late").HoldUntil(release))
	d := testDoorAt(t, origin.Addr(), func(p *Policy) {
		p.Mode, p.MaxWait, p.Timeout = UserTriggered, 200*time.Millisecond, 400*time.Millisecond
	})
	_, err := d.Client().Get(origin.URL + "/slow")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a hanging answer got %v, want the request's timeout", err)
	}
	if errors.Is(err, ErrMaxWaitPassed) {
		t.Errorf("a request that started and timed out is reported as a wait cut by its bound: %v", err)
	}
}

// The door's robots.txt fetch, shared with every door of the process, does not carry a person's
// bound: when the person's request gives up waiting for it, the fetch goes on and the keeper
// stores robots.txt as read, not a false "unreachable" that would close the origin for everyone.
func TestUserTriggeredBoundStaysOffTheSharedRobotsTxtFetch(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	origin := site.NewOrigin().Robots("User-agent: *\nAllow: /\n").Otherwise(etiquettetest.Text("ok"))
	// The default rate (3 a second): a start taken now puts the next one a third of a second off,
	// past the person's 100 ms bound.
	clock, err := hostclock.NewLocal(hostclock.Config{LatencyFactor: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	lease, err := clock.Acquire(context.Background(), origin.Addr(), kind.HTML)
	if err != nil {
		t.Fatal(err)
	}
	lease.Done(hostclock.Outcome{Status: http.StatusOK})
	keeper := robots.NewKeeper(robots.Options{})
	d := testDoorAt(t, origin.Addr(), func(p *Policy) {
		p.Mode, p.MaxWait, p.Clock, p.Robots = UserTriggered, 100*time.Millisecond, clock, keeper
	})
	if _, err := d.Client().Get(origin.URL + "/page"); !errors.Is(err, ErrMaxWaitPassed) {
		t.Fatalf("the person's request got %v; want its wait for robots.txt cut by the bound", err)
	}
	u, _ := url.Parse(origin.URL + "/page")
	e, err := keeper.Lookup(context.Background(), u, func(context.Context, string) (*http.Response, error) {
		t.Error("the keeper had no robots.txt fetch going on or done: the person's give-up ended it")
		return nil, errors.New("no second fetch")
	})
	if err != nil || e.Outcome != robots.Parsed {
		t.Errorf("the keeper holds %+v (%v) for the origin; want robots.txt as read", e, err)
	}
}

// A 429 whose Retry-After outlasts the bound is not re-sent — no retry is counted, reported or
// attempted — and the person gets the refusal saying how long the site asked to wait.
func TestUserTriggeredDoesNotRetryPastTheBound(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	origin := site.NewOrigin().Serve("/busy", etiquettetest.Status(http.StatusTooManyRequests).RetryAfter(time.Minute))
	d := testDoorAt(t, origin.Addr(), func(p *Policy) { p.Mode, p.MaxWait = UserTriggered, 2*time.Second })
	_, err := d.Client().Get(origin.URL + "/busy")
	var tl *hostclock.WaitTooLongError
	if !errors.As(err, &tl) || tl.Reason != hostclock.ReasonRetryAfter || tl.Wait < 50*time.Second {
		t.Errorf("got %v; want a WaitTooLongError (retry-after, about 60 s)", err)
	}
	if n := d.Stats().Retries; n != 0 {
		t.Errorf("%d retries counted for a request that could not be re-sent within its bound", n)
	}
	if paths := etiquettetest.Paths(origin.Requests()); len(paths) != 2 {
		t.Errorf("the site saw %q, want robots.txt and one /busy", paths)
	}
}
