package politeness

// This file decides whether a request's URL may be fetched at all: robots.txt (RFC 9309).

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/politecrawl/etiquette/internal/startby"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/origin"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// robotsGate decides every request's URL — each redirect hop and HEAD included — against the
// robots.txt of its origin, kept by keeper and fetched with fetch, as reading says (RFC 9309 §2.2
// for a crawl; the user-triggered reading for a person's fetch). A disallowed request is not
// sent: the caller gets a *robots.DisallowedError naming the deciding rule and the token whose
// group it is, and sink a Refused event (reason "robots"; "error" when robots.txt could not be
// decided). An admitted request is an Admitted event. The Crawl-delay of the reading's token
// becomes the floor of the origin's interval on clock.
//
// The gate holds no budget slot while it waits for robots.txt: the fetch enters the door at the
// top (identified, cookie-free, cached, budgeted like any request), marked internal so that the
// gate lets it through instead of deciding robots.txt for robots.txt.
func robotsGate(next http.RoundTripper, keeper *robots.Keeper, reading robots.Reading, fetch robots.Fetch, clock hostclock.Clock, sink events.Sink) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if isInternal(req.Context()) {
			return next.RoundTrip(req)
		}
		budget, _ := origin.BudgetKey(req.URL)
		ev := events.Event{URL: req.URL.String(), Origin: budget, Kind: kind.FromContext(req.Context()), Method: req.Method}
		entry, err := lookupWithin(req.Context(), keeper, req.URL, fetch)
		if err != nil {
			ev.Type, ev.Reason, ev.Detail, ev.Err = events.Refused, "error", err.Error(), err
			sink.Emit(ev)
			return nil, fmt.Errorf("robots.txt for %s: %w", req.URL.Redacted(), err)
		}
		delay, _ := reading.CrawlDelay(entry)
		robotsKey, _ := origin.RobotsKey(req.URL)
		clock.SetFloor(budget, robotsKey+" "+reading.Token, delay)
		if dec, token := reading.Decide(entry, req.URL); !dec.Allowed {
			derr := &robots.DisallowedError{URL: req.URL.Redacted(), Token: token, Decision: dec}
			ev.Type, ev.Reason, ev.Detail, ev.Err = events.Refused, "robots", derr.Error(), derr
			sink.Emit(ev)
			return nil, derr
		}
		ev.Type = events.Admitted
		sink.Emit(ev)
		return next.RoundTrip(req)
	})
}

// lookupWithin is keeper.Lookup, waiting for robots.txt no longer than the request's start bound
// (startby.With), if it has one: the shared fetch goes on for the others, and this
// request fails with an error for which errors.Is(err, ErrMaxWaitPassed) holds (and
// errors.Is(err, context.DeadlineExceeded)).
func lookupWithin(ctx context.Context, keeper *robots.Keeper, u *url.URL, fetch robots.Fetch) (*robots.Entry, error) {
	return startby.Wait(ctx, func(ctx context.Context) (*robots.Entry, error) { return keeper.Lookup(ctx, u, fetch) })
}
