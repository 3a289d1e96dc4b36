package extensions

// This file decides what the door's answers mean to Colly: refusals keep Colly's errors, a body
// cut at the collector's own MaxBodySize says so, and Colly's default User-Agent, which no
// scraper chose, is not reported as the scraper's.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// ErrOriginGivenUp is the error of every request, through a collector, to an origin the door gave
// up for the crawl: after a Retry-After beyond 24 hours (a 429 or 503 that asks for more), or
// after too many failures in a row. errors.As finds the *hostclock.GiveUpError with the origin and
// the reason. The response that made the door give up reaches OnError as Colly delivers any
// error status: r.StatusCode is 429 (or 503), with its headers.
var ErrOriginGivenUp = errors.New("etiquette: the origin was given up for this crawl")

// collyTransport is the collector's transport around the door.
type collyTransport struct {
	next    http.RoundTripper // the door
	maxBody int64             // the collector's MaxBodySize the door caps bodies at; 0: none carried
	proxied bool              // the door's proxy is the collector's (noteProxy)
}

func (t *collyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.proxied && req.Response == nil {
		return t.noteProxyURL(req)
	}
	return t.roundTrip(req)
}

func (t *collyTransport) roundTrip(req *http.Request) (*http.Response, error) {
	if ua := req.Header["User-Agent"]; len(ua) == 1 && ua[0] == collyDefaultAgent {
		// A clone made before Polite still sends Colly's default: nothing the scraper chose, so
		// nothing for the door to report as replaced.
		out := req.WithContext(req.Context())
		out.Header = req.Header.Clone()
		delete(out.Header, "User-Agent")
		req = out
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, collyError(err)
	}
	if t.maxBody > 0 && resp.Body != nil && resp.Body != http.NoBody {
		resp.Body = &collyBody{ReadCloser: resp.Body, maxBody: t.maxBody}
	}
	return resp, nil
}

// proxyNoteKey is the context key of the *proxyNote a request carries into the door.
type proxyNoteKey struct{}

// proxyNote is the proxy a request went through, as Colly's proxy switchers record it.
type proxyNote struct{ url atomic.Pointer[string] }

// noteProxyURL sends req and gives it the proxy its proxy function chose, where Colly reads it
// (r.Request.ProxyURL). Colly's switchers record it by overwriting the request they are given —
// below the door, a copy of req — so the door's proxy function (noteProxy) passes it back up. A
// transport may not change its caller's request, but Colly's own does, and Colly reads nothing
// else; only the request Colly built is changed, never a redirect hop.
func (t *collyTransport) noteProxyURL(req *http.Request) (*http.Response, error) {
	note := &proxyNote{}
	resp, err := t.roundTrip(req.WithContext(context.WithValue(req.Context(), proxyNoteKey{}, note)))
	if u := note.url.Load(); u != nil {
		*req = *req.WithContext(context.WithValue(req.Context(), colly.ProxyURLKey, *u))
	}
	return resp, err
}

// noteProxy wraps a collector's proxy function so that the proxy a Colly switcher records on the
// door's copy of a request reaches the collector's request (noteProxyURL).
func noteProxy(f func(*http.Request) (*url.URL, error)) func(*http.Request) (*url.URL, error) {
	return func(r *http.Request) (*url.URL, error) {
		u, err := f(r)
		if note, ok := r.Context().Value(proxyNoteKey{}).(*proxyNote); ok {
			if s, ok := r.Context().Value(colly.ProxyURLKey).(string); ok {
				note.url.Store(&s)
			}
		}
		return u, err
	}
}

// collyError gives a refusal of the door the error Colly's users test for as well.
func collyError(err error) error {
	var gu *hostclock.GiveUpError
	switch {
	case errors.Is(err, robots.ErrDisallowed):
		return &alsoError{err: err, also: colly.ErrRobotsTxtBlocked}
	case errors.As(err, &gu):
		return &alsoError{err: err, also: ErrOriginGivenUp}
	}
	return err
}

// alsoError is err, for which errors.Is(e, also) holds as well.
type alsoError struct{ err, also error }

func (e *alsoError) Error() string        { return e.err.Error() }
func (e *alsoError) Unwrap() error        { return e.err }
func (e *alsoError) Is(target error) bool { return target == e.also }

// collyBody names the collector's MaxBodySize in the error of a body cut at it, since raising
// Policy.MaxBodyBytes, which the door's error suggests, would not lift that cap.
type collyBody struct {
	io.ReadCloser
	maxBody int64
}

func (b *collyBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var tl *politeness.BodyTooLargeError
	if err != nil && err != io.EOF && errors.As(err, &tl) && tl.Limit == b.maxBody {
		err = &maxBodyError{tl}
	}
	return n, err
}

// maxBodyError is a *politeness.BodyTooLargeError at the collector's MaxBodySize.
type maxBodyError struct{ *politeness.BodyTooLargeError }

func (e *maxBodyError) Error() string {
	return fmt.Sprintf("%s: body larger than the collector's MaxBodySize of %d bytes (set before Polite, which caps the door's bodies at it); "+
		"raise c.MaxBodySize (colly.MaxBodySize) before Polite, or set it to 0 and let Policy.MaxBodyBytes decide", e.URL, e.Limit)
}

func (e *maxBodyError) Unwrap() error { return e.BodyTooLargeError }
