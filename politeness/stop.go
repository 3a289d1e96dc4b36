package politeness

// This file decides which requests Door.Stop cancels: every one that has not reached the wire.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// ErrStopped is the error of a request that had not reached the wire when [Door.Stop] was
// called. errors.Is(err, context.Canceled) is true as well, so the host clock does not count it
// against the origin.
var ErrStopped = fmt.Errorf("etiquette: the door was stopped before this request was sent: %w", context.Canceled)

// pendingRequests are a door's requests between its top and the wire: waiting for robots.txt,
// for their origin's turn or for a Retry-After. Once stopped, every one of them is cancelled and
// nothing new passes. It also keeps the door's backlog count.
type pendingRequests struct {
	stopped atomic.Bool
	mu      sync.Mutex
	set     map[*pending]struct{}
	backlog backlog
}

func newPendingRequests(sink events.Sink) *pendingRequests {
	return &pendingRequests{set: map[*pending]struct{}{}, backlog: backlog{sink: sink}}
}

// pending is one request between the top of the door and the wire. It is also the request's
// context from there on: the context Stop cancels, which answers pendingKey with the pending
// itself (one allocation less per request than a context.WithValue on top).
type pending struct {
	context.Context
	reg    *pendingRequests
	cancel context.CancelCauseFunc
	onWire atomic.Int32 // sends of this request whose response is not finished yet
	sent   atomic.Bool  // it reached the wire at least once: it left the backlog
	body   watchedBody  // the final response's body, as trackPending returns it
}

type pendingKey struct{}

func (p *pending) Value(key any) any {
	if key == (pendingKey{}) {
		return p
	}
	return p.Context.Value(key)
}

// stop refuses every new request and cancels every pending one that has nothing on the wire.
func (r *pendingRequests) stop() {
	r.stopped.Store(true)
	r.mu.Lock()
	defer r.mu.Unlock()
	for p := range r.set {
		if p.onWire.Load() == 0 {
			p.cancel(ErrStopped)
		}
	}
}

// add registers a request whose context is ctx; the pending it returns is the request's context
// from now on.
func (r *pendingRequests) add(ctx context.Context) *pending {
	ctx, cancel := context.WithCancelCause(ctx)
	p := &pending{Context: ctx, reg: r, cancel: cancel}
	r.mu.Lock()
	r.set[p] = struct{}{}
	r.mu.Unlock()
	r.backlog.add(1)
	if r.stopped.Load() {
		cancel(ErrStopped)
	}
	return p
}

// remove ends p's registration (its response is done, or it failed).
func (r *pendingRequests) remove(p *pending) {
	r.mu.Lock()
	delete(r.set, p)
	r.mu.Unlock()
	r.left(p)
	p.cancel(nil)
}

// left takes p out of the backlog the first time it reaches the wire or ends.
func (r *pendingRequests) left(p *pending) {
	if p.sent.CompareAndSwap(false, true) {
		r.backlog.add(-1)
	}
}

// trackPending registers every request in reg until its response is done, so that Door.Stop can
// cancel it while it waits, and after Stop refuses every new one with ErrStopped (a Refused event
// on sink, reason "stopped"). A request cancelled by Stop fails with an error that matches
// ErrStopped.
//
// robots.txt fetches are the exception: they belong to the keeper that every door of the process
// shares, and a fetch refused because one door stopped would leave "unreachable" — a complete
// disallow — for all the others. So they are neither tracked nor refused.
func trackPending(next http.RoundTripper, reg *pendingRequests, sink events.Sink) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if isInternal(req.Context()) {
			return next.RoundTrip(req)
		}
		if reg.stopped.Load() {
			budget, _ := origin.BudgetKey(req.URL)
			sink.Emit(events.Event{Type: events.Refused, URL: req.URL.String(), Origin: budget, Kind: kind.Of(req),
				Method: req.Method, Reason: "stopped", Detail: ErrStopped.Error(), Err: ErrStopped})
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, ErrStopped
		}
		p := reg.add(req.Context())
		req = req.WithContext(p)
		resp, err := next.RoundTrip(req)
		if err != nil {
			if context.Cause(p) == ErrStopped && !errors.Is(err, ErrStopped) {
				err = fmt.Errorf("%w (%w)", ErrStopped, err)
			}
			reg.remove(p)
			return resp, err
		}
		if resp.Body == nil {
			resp.Body = http.NoBody
		}
		p.body.rc, p.body.end = resp.Body, untrackAtEnd{p}
		resp.Body = &p.body
		return resp, nil
	})
}

// wireLayer is the last step before the network. While a request's response is on the wire
// (until its body is finished) Stop leaves it alone; before that — and between a 429 and its
// retry — Stop cancels it, and after Stop nothing new passes. Like trackPending it leaves
// robots.txt fetches alone.
func wireLayer(next http.RoundTripper, reg *pendingRequests) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if isInternal(req.Context()) {
			return next.RoundTrip(req)
		}
		p, _ := req.Context().Value(pendingKey{}).(*pending)
		if p != nil {
			// Count the send before looking at stopped; stop sets stopped before it reads the
			// count, so one of the two always sees the other.
			p.onWire.Add(1)
			reg.left(p)
		}
		if reg.stopped.Load() {
			if p != nil {
				p.onWire.Add(-1)
			}
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, ErrStopped
		}
		if p == nil {
			return next.RoundTrip(req)
		}
		resp, err := next.RoundTrip(req)
		if err != nil || resp.Body == nil || resp.Body == http.NoBody {
			// Nothing left to read: the layers above recognise an empty body by http.NoBody.
			reg.offWire(p)
			return resp, err
		}
		resp.Body = watchBody(resp.Body, offWireAtEnd{p})
		return resp, nil
	})
}

// untrackAtEnd ends a request's registration when its response body is finished.
type untrackAtEnd struct{ *pending }

func (p untrackAtEnd) bodyEnded(int64, error) { p.reg.remove(p.pending) }

// offWireAtEnd ends a send's time on the wire when its response body is finished.
type offWireAtEnd struct{ *pending }

func (p offWireAtEnd) bodyEnded(int64, error) { p.reg.offWire(p.pending) }

// offWire records that one send of p is finished. If the door stopped meanwhile and nothing of
// p is on the wire any more, p is cancelled now: Stop skipped it while its response was arriving,
// and whatever comes next (a retry waiting out a Retry-After) must not wait on.
func (r *pendingRequests) offWire(p *pending) {
	if p.onWire.Add(-1) == 0 && r.stopped.Load() {
		p.cancel(ErrStopped)
	}
}
