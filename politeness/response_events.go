package politeness

// This file decides what the event stream says about each response.

import (
	"errors"
	"net/http"

	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// reportResponses emits one Response event on sink for every response, when its body is read to
// the end, fails or is closed: status, the cache's outcome and its reason beyond RFC 9111 (Reason
// "lastmod"; it removes the cache's private headers, so the caller never sees them), and the
// bytes delivered. A body cut at its cap is marked
// Truncated and followed by a Notice (reason "truncated").
func reportResponses(next http.RoundTripper, sink events.Sink) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err != nil {
			return resp, err
		}
		budget, _ := origin.BudgetKey(req.URL)
		ev := events.Event{Type: events.Response, URL: req.URL.String(), Origin: budget, Kind: kind.Of(req),
			Method: req.Method, Status: resp.StatusCode, Cache: cache.StatusOf(resp), Reason: cache.ReasonOf(resp)}
		resp.Header.Del(cache.StatusHeader)
		resp.Header.Del(cache.ReasonHeader)
		if resp.Body == nil {
			resp.Body = http.NoBody
		}
		rb := &reportedBody{report: responseReport{ev: ev, sink: sink}}
		rb.rc, rb.end = resp.Body, &rb.report
		resp.Body = &rb.watchedBody
		return resp, nil
	})
}

// reportedBody is a watched body and the report it ends with, in one allocation.
type reportedBody struct {
	watchedBody
	report responseReport
}

// responseReport emits a response's event when its body is finished.
type responseReport struct {
	ev   events.Event
	sink events.Sink
}

func (r *responseReport) bodyEnded(n int64, err error) {
	ev := r.ev
	ev.Bytes, ev.Err = n, err
	ev.Truncated = errors.Is(err, ErrBodyTooLarge)
	r.sink.Emit(ev)
	if ev.Truncated {
		r.sink.Emit(events.Event{Type: events.Notice, URL: ev.URL, Origin: ev.Origin, Kind: ev.Kind,
			Reason: "truncated", Detail: err.Error(), Err: err})
	}
}
