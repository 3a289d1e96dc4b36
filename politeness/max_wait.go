package politeness

// This file decides how long a person's request may wait for its origin's turn.

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/politecrawl/etiquette/internal/startby"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// ErrMaxWaitPassed marks the error of a user-triggered door's request that waited its whole
// Policy.MaxWait for its origin's turn — in line behind the origin's requests in flight, or for
// robots.txt — without being let through: errors.Is(err, ErrMaxWaitPassed) tells such a wait
// from a request that started and then timed out (both also match context.DeadlineExceeded). A
// request the door knew at once could not start in time fails with a *hostclock.WaitTooLongError
// instead.
var ErrMaxWaitPassed = startby.ErrPassed

// boundWait gives every request of a user-triggered door a start bound, max after it entered
// (startby.With). A redirect hop keeps the bound of the request it belongs to — Go's
// http.Client builds a hop from the caller's context, so the bound is taken from the request that
// got the redirect — and so does a retry. Below, the host clock refuses at once a request that
// could only start later — behind the budget, a Crawl-delay or a Retry-After — with a
// *hostclock.WaitTooLongError, a wait in line ends at the bound, and the robots gate waits for
// robots.txt only until the bound. A request to an origin the clock has paused beyond the bound is
// refused here already, before robots.txt is looked up, and reported on sink as Refused (reason
// "deadline").
//
// The door's own robots.txt fetch does not carry the bound (see robotsFetch): the fetch is shared
// with every door of the process, and a person's deadline must not leave a false "unreachable".
func boundWait(next http.RoundTripper, max time.Duration, clock hostclock.Clock, sink events.Sink) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if isInternal(req.Context()) {
			return next.RoundTrip(req)
		}
		by := time.Now().Add(max)
		if req.Response != nil && req.Response.Request != nil { // a redirect hop
			if first, ok := startby.From(req.Response.Request.Context()); ok {
				by = first
			}
		}
		// A caller's own bound may shorten the wait, never lengthen it past Policy.MaxWait.
		if caller, ok := startby.From(req.Context()); !ok || caller.After(by) {
			req = req.WithContext(startby.With(req.Context(), by))
		} else {
			by = caller
		}
		key, err := origin.BudgetKey(req.URL)
		if err != nil {
			return next.RoundTrip(req) // the layers below refuse it with their own error
		}
		// pausedPast is the refusal of req when its origin is paused past the bound. A given-up
		// origin (an error from PausedUntil) is refused by the clock below, with its own error.
		pausedPast := func() error {
			until, reason, err := clock.PausedUntil(key)
			if err != nil || !until.After(by) {
				return nil
			}
			now := time.Now()
			tl := &hostclock.WaitTooLongError{Origin: key, Earliest: until, Reason: reason, Deadline: by,
				Wait: until.Sub(now), Left: by.Sub(now)}
			sink.Emit(events.Event{Type: events.Refused, URL: req.URL.String(), Origin: key, Kind: kind.Of(req),
				Method: req.Method, Reason: "deadline", Detail: tl.Error(), Err: tl, Until: until})
			return inPolicyTerms(tl, max)
		}
		if err := pausedPast(); err != nil {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, err
		}
		resp, err := next.RoundTrip(req)
		var tl *hostclock.WaitTooLongError
		if err != nil && errors.As(err, &tl) {
			err = inPolicyTerms(err, max)
		}
		// A 429 or 503 the retry layer did not re-send because the pause it brought outlasts the
		// bound is refused as a wait would have been: the person learns how long the site asked.
		if err == nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
			if perr := pausedPast(); perr != nil {
				resp.Body.Close() // hands the slot back
				return nil, perr
			}
		}
		return resp, err
	})
}

// inPolicyTerms adds to a refusal what a caller of a user-triggered door can do about it.
func inPolicyTerms(err error, max time.Duration) error {
	return fmt.Errorf("%w (a person's request waits at most Policy.MaxWait, %s: raise it, or try again later)", err, max)
}
