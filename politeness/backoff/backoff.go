// Package backoff handles 429 Too Many Requests, 503 Service Unavailable and Retry-After: it parses
// Retry-After (RFC 9110 §10.2.3), holds the exponential backoff policy the host clock applies when a
// response names no usable Retry-After, and provides the retry layer that re-sends idempotent
// requests after such a response.
//
// Who pauses: the host clock. The host clock layer reports every response's status and parsed
// Retry-After when the slot is handed back, and the clock pauses the origin for every request
// of the process — robots.txt fetches and requests that are never retried included. This layer
// never sleeps on a pause itself: it closes the 429/503 body (which hands the slot back and starts
// the pause) and re-sends the request below itself, where the host clock holds it until the pause
// ends and a start slot is free. So a pause is never applied twice, and every retry is budgeted
// like any request.
package backoff

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/politecrawl/etiquette/internal/quietlog"
	"github.com/politecrawl/etiquette/internal/startby"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// Clock is what the retry layer asks the host clock: the pause in force for a budget key, and
// whether the origin has been given up. hostclock.Clock satisfies it. (It is declared here, not
// taken from package hostclock, because the host clock imports this package's policy.)
type Clock interface {
	PausedUntil(key string) (until time.Time, reason string, err error)
}

// Defaults of [Options].
const (
	DefaultMaxRetries = 3
	DefaultMaxWait    = 5 * time.Minute
	// bodyKeep is how much of a 429/503 body is kept, so that the caller still gets it when the
	// layer decides not to retry after all.
	bodyKeep = 64 << 10
)

// Options configures [Layer]. The zero value retries GET and HEAD up to 3 times after a 429 or 503,
// waits at most 5 minutes for a pause, and emits no events.
type Options struct {
	// MaxRetries bounds the re-sends of one request; 0 means DefaultMaxRetries, negative disables
	// retrying.
	MaxRetries int
	// MaxWait is the longest pause the layer waits out before a retry; when the origin is paused
	// for longer, the caller gets the 429/503 response instead. 0 means DefaultMaxWait.
	MaxWait time.Duration
	// Retry decides whether a response is retried; nil means DefaultRetry.
	Retry func(req *http.Request, resp *http.Response) bool
	// Sink receives a Retried event for every re-send.
	Sink events.Sink
	// Logger receives a record for every re-send (Info); nil means warnings and errors only, on
	// slog.Default().
	Logger *slog.Logger
	// Now reads the time; nil means time.Now.
	Now func() time.Time
}

// DefaultRetry retries idempotent requests that can be re-sent (GET and HEAD without a body, or
// with one that GetBody can recreate) after 429 or 503.
func DefaultRetry(req *http.Request, resp *http.Response) bool {
	if req.Method != http.MethodGet && req.Method != http.MethodHead && req.Method != "" {
		return false
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable
}

// Layer returns the retry layer: a request answered 429 or 503 is re-sent through next, after the
// host clock c has paused its origin, up to MaxRetries times; the caller sees the last response.
// It is placed above the host clock layer, so every re-send takes a start slot. A request is not
// re-sent when its Retry-After exceeds [MaxRetryAfter] (the clock gives the origin up), when the
// origin is paused for longer than MaxWait or past the start bound a user-triggered door gives a
// person's request (politeness.Policy.MaxWait), or when its context ends while waiting (the
// caller then gets the context's error).
//
// The layer never waits itself: the clock below holds the retry until the pause ends. With c nil
// nothing would hold it, so nothing is retried and every response passes through unchanged.
func Layer(next http.RoundTripper, c Clock, o Options) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = DefaultMaxRetries
	}
	if o.MaxWait == 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.Retry == nil {
		o.Retry = DefaultRetry
	}
	if o.Sink == nil {
		o.Sink = events.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if c == nil {
		o.MaxRetries = -1
	}
	return &layer{next: next, clock: c, o: o}
}

type layer struct {
	next  http.RoundTripper
	clock Clock
	o     Options
}

func (t *layer) logger() *slog.Logger {
	return quietlog.Or(t.o.Logger)
}

func (t *layer) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := t.next.RoundTrip(req)
		if err != nil || attempt >= t.o.MaxRetries || !t.o.Retry(req, resp) {
			return resp, err
		}
		if _, raErr := ParseRetryAfter(resp.Header.Get("Retry-After"), t.o.Now()); errors.Is(raErr, ErrBeyondCeiling) {
			return resp, nil // not worth a retry; the clock gives the origin up when the body closes
		}
		// Closing the body hands the slot back and lets the clock learn the pause.
		kept := keepBody(resp)
		stop := func() (*http.Response, error) {
			resp.Body = kept
			return resp, nil
		}
		key, kerr := origin.BudgetKey(req.URL)
		if kerr != nil {
			return stop()
		}
		var wait time.Duration
		why := "retry-after"
		until, reason, gerr := t.clock.PausedUntil(key)
		if gerr != nil {
			return stop()
		}
		if !until.IsZero() {
			wait, why = until.Sub(t.o.Now()), reason
		}
		if wait > t.o.MaxWait {
			return stop()
		}
		// A person's request (a user-triggered door's start bound) is not re-sent when its
		// origin is paused past the bound: the retry could not start in time.
		if by, ok := startby.From(req.Context()); ok && until.After(by) {
			return stop()
		}
		if req.GetBody != nil && req.Body != nil && req.Body != http.NoBody {
			body, berr := req.GetBody()
			if berr != nil {
				return stop()
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
		t.o.Sink.Emit(events.Event{Type: events.Retried, URL: req.URL.String(), Origin: key, Kind: kind.Of(req),
			Method: req.Method, Status: resp.StatusCode, Reason: why, Wait: max(wait, 0)})
		t.logger().Info("backoff: retrying", "origin", key, "url", req.URL.Redacted(), "status", resp.StatusCode,
			"attempt", attempt+1, "reason", why, "wait", max(wait, 0))
	}
}

// keepBody reads up to bodyKeep bytes of resp's body and closes it, returning a replacement body
// that ends in an error when the original was longer.
func keepBody(resp *http.Response) io.ReadCloser {
	b, err := io.ReadAll(io.LimitReader(resp.Body, bodyKeep+1))
	resp.Body.Close()
	if err == nil && len(b) <= bodyKeep {
		return io.NopCloser(bytes.NewReader(b))
	}
	if len(b) > bodyKeep {
		b = b[:bodyKeep]
	}
	if err == nil {
		err = errors.New("backoff: the rest of this 429/503 body was discarded before the retry decision")
	}
	return io.NopCloser(io.MultiReader(bytes.NewReader(b), errReader{err}))
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
