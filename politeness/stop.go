package politeness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
)

// ErrStopped is the error of a request that had not reached the wire when [Door.Stop] was
// called. errors.Is(err, context.Canceled) is true as well, so the host clock does not count it
// against the origin.
var ErrStopped = fmt.Errorf("etiquette: the door was stopped before this request was sent: %w", context.Canceled)

// pending is a request between the top of the door and the wire: waiting for robots.txt, for
// its origin's turn or for a Retry-After. Stop cancels every pending request.
type pending struct {
	cancel context.CancelCauseFunc
	onWire atomic.Int32 // sends of this request whose response is not finished yet
}

type pendingKey struct{}

// Stop makes the door refuse every new request and cancels every request still waiting — for
// robots.txt, a start slot or a pause — with [ErrStopped]. Requests already on the wire are left
// to finish; cancel their contexts to abort them too. Stop is what a crawler calls on SIGINT
// before giving the requests in flight a moment to complete. It cannot be undone.
func (d *Door) Stop() {
	d.stopped.Store(true)
	d.pending.Range(func(k, _ any) bool {
		if p := k.(*pending); p.onWire.Load() == 0 {
			p.cancel(ErrStopped)
		}
		return true
	})
}

// track registers req as pending and returns it with a context Stop can cancel, and the function
// that ends the registration (call it when the response is done).
func (d *Door) track(req *http.Request) (*http.Request, func()) {
	if isInternal(req.Context()) {
		// robots.txt fetches belong to the keeper, which is shared by every door: a stopped door
		// must not cancel one and leave a false "unreachable" behind for the others.
		return req, func() {}
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	p := &pending{cancel: cancel}
	d.pending.Store(p, struct{}{})
	if d.stopped.Load() {
		cancel(ErrStopped)
	}
	return req.WithContext(context.WithValue(ctx, pendingKey{}, p)), func() {
		d.pending.Delete(p)
		cancel(nil)
	}
}

// wireLayer is the last step before the base transport. While a request's response is on the
// wire (until its body is finished) Stop leaves it alone; before that — and between a 429 and
// its retry — Stop cancels it, and after Stop nothing new passes.
//
// robots.txt fetches are the exception: they belong to the keeper that every door of the process
// shares, and a fetch refused because one door stopped would leave "unreachable" — a complete
// disallow — for all the others. So they are neither tracked nor refused.
func wireLayer(next http.RoundTripper, d *Door) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if isInternal(req.Context()) {
			return next.RoundTrip(req)
		}
		p, _ := req.Context().Value(pendingKey{}).(*pending)
		if p != nil {
			// Count the send before looking at stopped; Stop sets stopped before it reads the
			// count, so one of the two always sees the other.
			p.onWire.Add(1)
		}
		if d.stopped.Load() {
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
			p.offWire(d)
			return resp, err
		}
		resp.Body = &offWire{ReadCloser: resp.Body, p: p, d: d}
		return resp, nil
	})
}

// offWire records that one send of p is finished. If the door stopped meanwhile and nothing of
// p is on the wire any more, p is cancelled now: Stop skipped it while its response was arriving,
// and whatever comes next (a retry waiting out a Retry-After) must not wait on.
func (p *pending) offWire(d *Door) {
	if p.onWire.Add(-1) == 0 && d.stopped.Load() {
		p.cancel(ErrStopped)
	}
}

// offWire ends a send's time on the wire when its body is read to the end or closed.
type offWire struct {
	io.ReadCloser
	p    *pending
	d    *Door
	once sync.Once
}

func (b *offWire) Read(buf []byte) (int, error) {
	n, err := b.ReadCloser.Read(buf)
	if err != nil {
		b.once.Do(func() { b.p.offWire(b.d) })
	}
	return n, err
}

func (b *offWire) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(func() { b.p.offWire(b.d) })
	return err
}
