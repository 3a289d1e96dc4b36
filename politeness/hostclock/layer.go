// How an HTTP request passes the clock: acquire a slot, send, hand the slot back with the outcome.

package hostclock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politecrawl/etiquette/internal/startby"
	"github.com/politecrawl/etiquette/politeness/backoff"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// LayerOptions configures [Layer]. The zero value sets no timeout and emits no events.
type LayerOptions struct {
	// Timeout bounds each request, counted from the moment its slot is granted, so that waiting
	// for the origin's turn never times a request out. It covers reading the body. 0: no timeout.
	Timeout time.Duration
	// Sink receives a Waited event for every request that waited; a Paused event for every pause
	// an outcome started; a Notice (reason "latency", Wait the interval) when an origin's
	// response time starts or stops spacing its starts; and a Refused event for a request to a
	// given-up origin (reason "budget") or one whose deadline comes before its earliest start
	// (reason "deadline", Until the earliest start).
	Sink events.Sink
	// Now reads the time for Retry-After dates and the events' waits; nil means the clock's own
	// time when the clock is a *Local (Config.Time), time.Now otherwise.
	Now func() time.Time
}

type timeoutKey struct{}

// WithTimeout returns a copy of ctx that asks the layer to bound the request by d, counted from
// the grant of its slot, instead of LayerOptions.Timeout. A caller whose own deadline is meant
// for the exchange with the server, not for the wait for the origin's turn, moves it here. Only
// a layer that times requests (a positive LayerOptions.Timeout) applies it.
func WithTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, timeoutKey{}, d)
}

// acquire asks c for a slot for req, its wait bounded by req's context and by its start bound
// (startby.With).
func (t *layer) acquire(req *http.Request, key string, k kind.Kind) (Lease, error) {
	return startby.Wait(req.Context(), func(ctx context.Context) (Lease, error) { return t.clock.Acquire(ctx, key, k) })
}

// Layer returns the host clock layer: every request waits in c for a start slot to its origin
// (its budget key), then goes to next with its timeout starting there. The slot is handed back —
// and the clock taught the outcome — when the response body is closed or read to EOF, or when the
// request fails. A caller that neither reads nor closes a body holds the origin's place until the
// lease expires, as with any http.Client.
//
// The outcome carries the response's Retry-After, parsed with backoff.ParseRetryAfter, so the clock
// owns every pause: the backoff layer above only decides whether to re-send. A nil next means
// http.DefaultTransport.
//
// Layer panics when c is nil, at construction, before any request: a layer without a clock would
// enforce no budget at all, and quietly choosing one would hide a wiring mistake — two layers
// meant to share a clock could end up on different budgets. Pass [Shared]() for the process-wide
// clock.
func Layer(next http.RoundTripper, c Clock, o LayerOptions) http.RoundTripper {
	if c == nil {
		panic("hostclock.Layer: nil Clock; pass hostclock.Shared() for the process-wide budget, or a clock of your own")
	}
	if next == nil {
		next = http.DefaultTransport
	}
	if o.Sink == nil {
		o.Sink = events.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
		if l, ok := c.(*Local); ok {
			o.Now = l.cfg.Time.Now
		}
	}
	return &layer{next: next, clock: c, o: o}
}

type layer struct {
	next  http.RoundTripper
	clock Clock
	o     LayerOptions
}

func (t *layer) RoundTrip(req *http.Request) (*http.Response, error) {
	key, err := origin.BudgetKey(req.URL)
	if err != nil {
		closeBody(req)
		return nil, fmt.Errorf("hostclock: %w", err)
	}
	k := kind.Of(req)
	lease, err := t.acquire(req, key, k)
	if err != nil {
		closeBody(req)
		var gu *GiveUpError
		var tl *WaitTooLongError
		switch {
		case errors.As(err, &gu):
			ev := event(req, key, k)
			ev.Type, ev.Reason, ev.Detail, ev.Err = events.Refused, "budget", gu.Reason, err
			t.o.Sink.Emit(ev)
		case errors.As(err, &tl):
			ev := event(req, key, k)
			ev.Type, ev.Reason, ev.Detail, ev.Err, ev.Until = events.Refused, "deadline", err.Error(), err, tl.Earliest
			t.o.Sink.Emit(ev)
		}
		return nil, err
	}
	if g := lease.Grant(); g.Wait > 0 {
		ev := event(req, key, k)
		ev.Type, ev.Reason, ev.Wait = events.Waited, g.Reason, g.Wait
		t.o.Sink.Emit(ev)
	}
	// Everything the rest of the exchange needs is in x, one allocation: the trace that reports
	// the send, the body that hands the lease back, and the request the events describe.
	x := &exchange{t: t, lease: lease, req: req, key: key, kind: k}
	ctx := req.Context()
	timeout := t.o.Timeout
	if d, ok := ctx.Value(timeoutKey{}).(time.Duration); ok && timeout > 0 {
		timeout = d
	}
	if timeout > 0 {
		ctx, x.cancel = context.WithTimeout(ctx, timeout)
	}
	x.trace = httptrace.ClientTrace{
		GotConn:              func(info httptrace.GotConnInfo) { x.fresh.Store(!info.Reused) },
		WroteRequest:         func(httptrace.WroteRequestInfo) { x.lease.Sent() },
		GotFirstResponseByte: x.gotFirstByte,
	}
	resp, err := t.next.RoundTrip(req.WithContext(httptrace.WithClientTrace(ctx, &x.trace)))
	if err != nil {
		x.finish(Outcome{Err: err})
		return nil, err
	}
	x.out = Outcome{Status: resp.StatusCode}
	if v := resp.Header.Get("Retry-After"); v != "" {
		d, perr := backoff.ParseRetryAfter(v, t.o.Now())
		if perr == nil || errors.Is(perr, backoff.ErrBeyondCeiling) {
			x.out.RetryAfter = d
		}
	}
	if resp.Body == nil || resp.Body == http.NoBody {
		// HEAD and empty answers: there is nothing to read, and callers often never close them.
		x.finish(x.out)
		return resp, nil
	}
	x.rc = resp.Body
	resp.Body = (*leasedBody)(x)
	return resp, nil
}

// event returns the event about req, to origin key, that every event of the layer starts from.
func event(req *http.Request, key string, k kind.Kind) events.Event {
	return events.Event{URL: req.URL.String(), Origin: key, Kind: k, Method: req.Method}
}

// exchange is one request between its grant and the end of its response.
type exchange struct {
	t     *layer
	lease Lease
	req   *http.Request // as it entered the layer: what the events describe
	key   string
	kind  kind.Kind

	cancel context.CancelFunc // of the timeout; nil without one
	trace  httptrace.ClientTrace
	fresh  atomic.Bool // the request went out on a new connection (see gotFirstByte)

	rc   io.ReadCloser // the response body, read through leasedBody
	out  Outcome       // what the response says, before its body is read
	once sync.Once
}

// gotFirstByte tells the lease when the request reached the server, as closely as the client can
// know it, so the clock counts the origin's window from then, and its response time. On a
// connection that served a request before, that is when the request was written (the trace's
// WroteRequest). On a new one the server's log may see the request much later — the server
// accepts connections on its own schedule — so the lease hears again when the first byte of the
// response arrived, by which time the server certainly logged it: the window counts from that
// latest report, the response time from the write. Keep-alive makes the second case rare.
func (x *exchange) gotFirstByte() {
	if x.fresh.Load() {
		x.lease.Sent()
	}
}

// finish ends the exchange: the timeout's context is released, the lease handed back with out,
// and the pause or change of pace it caused reported.
func (x *exchange) finish(out Outcome) {
	if x.cancel != nil {
		x.cancel()
	}
	x.lease.Done(out)
	t := x.t
	if p, ok := x.lease.Caused(); ok {
		e := event(x.req, x.key, x.kind)
		e.Type, e.Status, e.Reason, e.Until, e.Err = events.Paused, out.Status, p.Reason, p.Until, out.Err
		if !p.Until.IsZero() {
			e.Wait = p.Until.Sub(t.o.Now())
		}
		t.o.Sink.Emit(e)
	}
	if p, ok := x.lease.Paced(); ok {
		e := event(x.req, x.key, x.kind)
		e.Type, e.Status, e.Reason, e.Wait = events.Notice, out.Status, ReasonLatency, p.Interval
		e.Detail = fmt.Sprintf("responses take about %s: starts at least %s apart", roughly(p.ResponseTime), roughly(p.Interval))
		if !p.Slowed {
			e.Detail = fmt.Sprintf("responses take about %s again: starts as the budget allows", roughly(p.ResponseTime))
		}
		t.o.Sink.Emit(e)
	}
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// leasedBody is an exchange's response body: it hands the lease back when the body is closed,
// read to EOF or fails.
type leasedBody exchange

func (b *leasedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil {
		out := b.out
		if err != io.EOF {
			out.Err = err
		}
		b.once.Do(func() { (*exchange)(b).finish(out) })
	}
	return n, err
}

func (b *leasedBody) Close() error {
	err := b.rc.Close()
	b.once.Do(func() { (*exchange)(b).finish(b.out) })
	return err
}
