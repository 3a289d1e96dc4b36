package politeness

// This file decides how the door fetches robots.txt for the robots gate: as its own request,
// through its own top.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/politecrawl/etiquette/internal/startby"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/origin"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// MaxRobotsRedirects is the number of redirect hops followed for robots.txt (RFC 9309 §2.3.1.2:
// at least five); a longer chain makes robots.txt unreachable, which disallows the origin.
const MaxRobotsRedirects = 5

// robotsMaxWait bounds how long a robots.txt request may wait for its origin's turn. It is
// longer than any pause the host clock waits out (a Retry-After beyond 24 h gives the origin up).
const robotsMaxWait = 25 * time.Hour

// entrance is the top of a door, set once the stack is built: the robots gate, deep inside the
// stack, sends its robots.txt requests there.
type entrance struct{ top http.RoundTripper }

func (e *entrance) RoundTrip(req *http.Request) (*http.Response, error) { return e.top.RoundTrip(req) }

// robotsFetch returns the keeper's fetch: a GET of robotsURL sent into top with the internal mark
// and the robots kind, following at most MaxRobotsRedirects hops. A fetch that fails is a Refused
// event (reason "error") on sink.
//
// The keeper bounds its fetch with a deadline (robots.Options.FetchTimeout), but a robots.txt
// request may wait for its origin's turn far longer — behind a Retry-After or a Crawl-delay —
// and time spent waiting must not turn into a false "unreachable" that refuses allowed pages.
// So the deadline is moved: the keeper's allowance (else exchange) bounds the exchange with the
// server, counted from the grant of the slot (hostclock.WithTimeout), and the wait is bounded by
// robotsMaxWait.
func robotsFetch(top http.RoundTripper, exchange time.Duration, sink events.Sink) robots.Fetch {
	client := &http.Client{
		Transport: top,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > MaxRobotsRedirects {
				return fmt.Errorf("robots.txt: more than %d redirects (RFC 9309 §2.3.1.2)", MaxRobotsRedirects)
			}
			return nil
		},
	}
	return func(ctx context.Context, robotsURL string) (*http.Response, error) {
		allowance := exchange
		if deadline, ok := ctx.Deadline(); ok {
			allowance = time.Until(deadline)
		}
		ctx, cancel := context.WithTimeout(hostclock.WithTimeout(context.WithoutCancel(ctx), allowance), robotsMaxWait)
		// A person's start bound (boundWait) stays with the person's request: the fetch is shared.
		ctx = markInternal(kind.WithKind(startby.With(ctx, time.Time{}), kind.Robots))
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, robotsURL, nil)
		if err != nil {
			cancel()
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			cancel()
			budget, _ := origin.BudgetKey(req.URL)
			sink.Emit(events.Event{Type: events.Refused, URL: robotsURL, Origin: budget, Kind: kind.Robots,
				Method: http.MethodGet, Reason: "error", Detail: err.Error(), Err: err})
			return nil, err
		}
		resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
		return resp, nil
	}
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

// internalKey marks the door's own requests (robots.txt) in their context. It is unexported, so
// no caller — and no header a Colly callback sets — can claim the mark.
type internalKey struct{}

func markInternal(ctx context.Context) context.Context {
	return context.WithValue(ctx, internalKey{}, true)
}

func isInternal(ctx context.Context) bool {
	v, _ := ctx.Value(internalKey{}).(bool)
	return v
}
