package politeness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/origin"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// robotsGate decides every request's URL — each redirect hop and HEAD included — against the
// robots.txt of its origin, for the door's token (RFC 9309 §2.2). A disallowed request is not
// sent: the caller gets a *robots.DisallowedError naming the deciding rule.
//
// The gate holds no budget slot while it waits for robots.txt: the fetch it triggers enters the
// door at the top (identified, cookie-free, cached, budgeted like any request), marked internal
// so that the gate lets it through instead of deciding robots.txt for robots.txt.
func robotsGate(next http.RoundTripper, d *Door) http.RoundTripper {
	token := d.policy.token()
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		k := kind.FromContext(req.Context())
		budget, _ := origin.BudgetKey(req.URL)
		if isInternal(req.Context()) {
			return next.RoundTrip(req)
		}
		if d.stopped.Load() {
			d.bus.Emit(events.Event{Type: events.Refused, URL: req.URL.String(), Origin: budget, Kind: k,
				Method: req.Method, Reason: "stopped", Detail: ErrStopped.Error(), Err: ErrStopped})
			return nil, ErrStopped
		}
		entry, err := d.keeper.Lookup(req.Context(), req.URL, d.fetchRobots)
		if err != nil {
			d.bus.Emit(events.Event{Type: events.Refused, URL: req.URL.String(), Origin: budget, Kind: k,
				Method: req.Method, Reason: "error", Detail: err.Error(), Err: err})
			return nil, fmt.Errorf("robots.txt for %s: %w", req.URL.Redacted(), err)
		}
		delay, _ := entry.CrawlDelay(token)
		robotsKey, _ := origin.RobotsKey(req.URL)
		d.clock.SetFloor(budget, robotsKey+" "+token, delay)
		dec := entry.Decide(token, req.URL)
		if !dec.Allowed {
			derr := &robots.DisallowedError{URL: req.URL.String(), Token: token, Decision: dec}
			d.bus.Emit(events.Event{Type: events.Refused, URL: req.URL.String(), Origin: budget, Kind: k,
				Method: req.Method, Reason: "robots", Detail: derr.Error(), Err: derr})
			return nil, derr
		}
		d.bus.Emit(events.Event{Type: events.Admitted, URL: req.URL.String(), Origin: budget, Kind: k, Method: req.Method})
		return next.RoundTrip(req)
	})
}

// robotsMaxWait bounds how long a robots.txt request may wait for its origin's turn. It is
// longer than any pause the host clock waits out (a Retry-After beyond 24 h gives the origin up).
const robotsMaxWait = 25 * time.Hour

// fetchRobots is the keeper's fetch: a GET of robotsURL sent into the top of the door with the
// internal mark and the robots kind, following at most MaxRobotsRedirects hops.
//
// The keeper bounds its fetch with a deadline (robots.Options.FetchTimeout), but a robots.txt
// request may wait for its origin's turn far longer — behind a Retry-After or a Crawl-delay —
// and time spent waiting must not turn into a false "unreachable" that refuses allowed pages.
// So the deadline is moved: the keeper's allowance bounds the exchange with the server, counted
// from the grant of the slot (hostclock.WithTimeout), and the wait is bounded by robotsMaxWait.
func (d *Door) fetchRobots(ctx context.Context, robotsURL string) (*http.Response, error) {
	exchange := d.policy.timeout()
	if deadline, ok := ctx.Deadline(); ok {
		exchange = time.Until(deadline)
	}
	ctx, cancel := context.WithTimeout(hostclock.WithTimeout(context.WithoutCancel(ctx), exchange), robotsMaxWait)
	ctx = markInternal(kind.WithKind(ctx, kind.Robots))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, robotsURL, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := d.robotsC.Do(req)
	if err != nil {
		cancel()
		budget, _ := origin.BudgetKey(req.URL)
		d.bus.Emit(events.Event{Type: events.Refused, URL: robotsURL, Origin: budget, Kind: kind.Robots,
			Method: http.MethodGet, Reason: "error", Detail: err.Error(), Err: err})
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose releases a request's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
