package politeness

// This file decides how the door names two failures a caller would otherwise read in net/http's
// words: its own exchange timeout ("context deadline exceeded") and a redirect to a scheme it
// does not send (which the robots gate would report as "robots.txt cannot apply").

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/politecrawl/etiquette/politeness/hostclock"
)

// ErrNonHTTPRedirect matches the error of a redirect to a scheme other than http or https
// (file:, javascript:, ftp:, …): the door refuses the hop.
var ErrNonHTTPRedirect = errors.New("redirect to a non-HTTP scheme refused")

// ErrNotHTTP matches the error of a request whose URL is not http or https.
var ErrNotHTTP = errors.New("the door sends only http and https requests")

// TimeoutError is the error of a request, or of the read of its body, that the door's exchange
// timeout (Policy.Timeout, counted from the grant of the request's slot) ended. It matches
// context.DeadlineExceeded with errors.Is, and reports Timeout() true, as net/http's own timeouts
// do, so code that tells timeouts apart with a net.Error check keeps working.
type TimeoutError struct {
	URL   string
	Limit time.Duration // the exchange timeout that ended the request
	Err   error         // what net/http returned
}

// Timeout reports true: the error is a timeout (net.Error's method, which *url.Error forwards).
func (e *TimeoutError) Timeout() bool { return true }

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s: no complete answer within the door's exchange timeout of %s, counted from the request's slot (Policy.Timeout): %v",
		e.URL, e.Limit, e.Err)
}

func (e *TimeoutError) Unwrap() error { return e.Err }

// checkScheme refuses a request that is not http(s) before any layer sees it, naming a redirect
// hop as one.
func checkScheme(req *http.Request) error {
	if s := req.URL.Scheme; s == "http" || s == "https" {
		return nil
	}
	if req.Response != nil && req.Response.Request != nil {
		return fmt.Errorf("%w: %s redirected to a %s: URL", ErrNonHTTPRedirect, req.Response.Request.URL.Redacted(), req.URL.Scheme)
	}
	return fmt.Errorf("%w: %q is a %s: URL", ErrNotHTTP, req.URL.Redacted(), req.URL.Scheme)
}

// nameTimeouts turns a "context deadline exceeded" that the caller's context did not cause —
// the door's exchange timeout — into a *TimeoutError, for the response and for its body.
func nameTimeouts(next http.RoundTripper, timeout time.Duration) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err != nil {
			return resp, namedTimeout(req, timeout, err)
		}
		if resp.Body != nil && resp.Body != http.NoBody {
			resp.Body = &timedBody{rc: resp.Body, req: req, timeout: timeout}
		}
		return resp, nil
	})
}

func namedTimeout(req *http.Request, timeout time.Duration, err error) error {
	var tl *hostclock.WaitTooLongError
	switch {
	case !errors.Is(err, context.DeadlineExceeded), req.Context().Err() != nil,
		errors.As(err, &tl), errors.Is(err, ErrMaxWaitPassed):
		return err // not a timeout, the caller's own deadline, or a wait bound with its own words
	}
	var te *TimeoutError
	if errors.As(err, &te) {
		return err
	}
	return &TimeoutError{URL: req.URL.Redacted(), Limit: timeout, Err: err}
}

// timedBody names the exchange timeout when it ends the read of a body.
type timedBody struct {
	rc      io.ReadCloser
	req     *http.Request
	timeout time.Duration
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && err != io.EOF {
		err = namedTimeout(b.req, b.timeout, err)
	}
	return n, err
}

func (b *timedBody) Close() error { return b.rc.Close() }
