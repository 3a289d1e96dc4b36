package politeness

// This file decides how much of a response body the crawler reads: its kind's cap.

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/politecrawl/etiquette/politeness/kind"
)

// BodyTooLargeError is the read error of a body longer than its kind's cap (Policy.MaxBodyBytes).
// The bytes up to the cap have been delivered; the rest was not read.
type BodyTooLargeError struct {
	URL   string
	Kind  kind.Kind
	Limit int64
}

func (e *BodyTooLargeError) Error() string {
	if e.Kind == kind.Robots {
		return fmt.Sprintf("%s: robots.txt longer than %d bytes: the rules after them are ignored (RFC 9309 §2.5, robots.MaxBytes)",
			e.URL, e.Limit)
	}
	return fmt.Sprintf("%s: body larger than the %d-byte cap for %s; raise Policy.MaxBodyBytes[%q] if the site really serves such bodies",
		e.URL, e.Limit, e.Kind, e.Kind)
}

// ErrBodyTooLarge matches every *BodyTooLargeError with errors.Is.
var ErrBodyTooLarge = errors.New("body larger than its cap")

func (e *BodyTooLargeError) Is(target error) bool { return target == ErrBodyTooLarge }

// capBodies cuts every response body at limit(kind of the request): a read beyond it fails with a
// *BodyTooLargeError after the first limit bytes were delivered, so truncation is never silent.
func capBodies(next http.RoundTripper, limit func(kind.Kind) int64) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err != nil || resp.Body == nil || resp.Body == http.NoBody {
			return resp, err
		}
		k := kind.Of(req)
		resp.Body = &cappedBody{rc: resp.Body, url: req.URL, kind: k, limit: limit(k), left: limit(k)}
		return resp, nil
	})
}

// cappedBody is a body that fails with a *BodyTooLargeError once more than limit bytes would be
// read. Like every response body it is read by one goroutine at a time.
type cappedBody struct {
	rc          io.ReadCloser
	url         *url.URL
	kind        kind.Kind
	limit, left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body that ends exactly at the cap from a longer one.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n == 0 {
			return 0, io.EOF
		}
		return 0, &BodyTooLargeError{URL: b.url.Redacted(), Kind: b.kind, Limit: b.limit}
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
