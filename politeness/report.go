package politeness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// BodyTooLargeError is the read error of a body longer than its kind's cap (Policy.MaxBodyBytes).
// The bytes up to the cap have been delivered; the rest was not read.
type BodyTooLargeError struct {
	URL   string
	Kind  kind.Kind
	Limit int64
}

func (e *BodyTooLargeError) Error() string {
	return fmt.Sprintf("%s: body larger than the %d-byte cap for %s; raise Policy.MaxBodyBytes[%q] if the site really serves such bodies",
		e.URL, e.Limit, e.Kind, e.Kind)
}

// ErrBodyTooLarge matches every *BodyTooLargeError with errors.Is.
var ErrBodyTooLarge = errors.New("body larger than its cap")

func (e *BodyTooLargeError) Is(target error) bool { return target == ErrBodyTooLarge }

// reportLayer is the outermost wrapper: it caps each response body at its kind's limit and emits
// one Response event when the body is closed or read to its end, with the bytes delivered.
//
// It also registers the request as pending until its response is done, so that Door.Stop can
// cancel it while it waits.
func reportLayer(next http.RoundTripper, d *Door) http.RoundTripper {
	p, sink := d.policy, d.bus
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		req, untrack := d.track(req)
		resp, err := next.RoundTrip(req)
		if err != nil {
			if context.Cause(req.Context()) == ErrStopped && !errors.Is(err, ErrStopped) {
				err = fmt.Errorf("%w (%w)", ErrStopped, err)
			}
			untrack()
			return resp, err
		}
		k := kind.Of(req)
		budget, _ := origin.BudgetKey(req.URL)
		ev := events.Event{Type: events.Response, URL: req.URL.String(), Origin: budget, Kind: k,
			Method: req.Method, Status: resp.StatusCode, Cache: cache.StatusOf(resp)}
		resp.Header.Del(cache.StatusHeader)
		resp.Body = &reportedBody{rc: resp.Body, limit: p.maxBody(k), sink: sink, ev: ev, done: untrack}
		return resp, nil
	})
}

type reportedBody struct {
	rc    io.ReadCloser
	limit int64
	sink  events.Sink
	mu    sync.Mutex
	n     int64
	ev    events.Event
	ended bool
	done  func() // called once, when the body is finished
}

func (b *reportedBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	left := b.limit - b.n
	b.mu.Unlock()
	if left <= 0 {
		// One byte more tells a body that ends exactly at the cap from a longer one.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n == 0 {
			b.finish(false, nil)
			return 0, io.EOF
		}
		err := &BodyTooLargeError{URL: b.ev.URL, Kind: b.ev.Kind, Limit: b.limit}
		b.finish(true, err)
		return 0, err
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := b.rc.Read(p)
	b.mu.Lock()
	b.n += int64(n)
	b.mu.Unlock()
	if err == io.EOF {
		b.finish(false, nil)
	}
	return n, err
}

func (b *reportedBody) Close() error {
	err := b.rc.Close()
	b.finish(false, nil)
	return err
}

func (b *reportedBody) finish(truncated bool, err error) {
	b.mu.Lock()
	if b.ended {
		b.mu.Unlock()
		return
	}
	b.ended = true
	b.done()
	ev := b.ev
	ev.Bytes = b.n
	ev.Truncated = truncated
	ev.Err = err
	b.mu.Unlock()
	b.sink.Emit(ev)
	if truncated {
		b.sink.Emit(events.Event{Type: events.Notice, URL: ev.URL, Origin: ev.Origin, Kind: ev.Kind,
			Reason: "truncated", Detail: err.Error(), Err: err})
	}
}
