// This file decides what the site as a whole is: a set of loopback origins sharing one
// recording of every request they receive.

package etiquettetest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"time"
)

// Site is a set of origins on loopback, each an httptest server on its own port, and the
// recording of every request they received, in order of arrival. Make one with [NewSite], add
// origins with [Site.NewOrigin], and read the recording with [Site.Requests] or, after a
// [Site.Mark], [Site.Since]. The recording keeps the first [MaxRecorded] requests; later ones
// are answered but only counted ([Site.Unrecorded]). A Site is safe for concurrent use; its zero
// value is not usable.
type Site struct {
	mu         sync.Mutex
	log        []Request
	limit      int // MaxRecorded; smaller in this package's tests
	unrecorded int
	origins    []*Origin
	closing    bool
	closed     chan struct{} // closed by Close: ends every held answer
	arrived    chan struct{} // closed and replaced at every arrival: wakes Await
}

// NewSite returns a site with no origins yet.
func NewSite() *Site {
	return &Site{limit: MaxRecorded, closed: make(chan struct{}), arrived: make(chan struct{})}
}

// MaxRecorded bounds a site's recording, so a long-running site (a demo) cannot grow without
// end: at about 2 KB a request, it holds a crawl of several hours at 3 requests per second.
const MaxRecorded = 100_000

// NewOrigin starts a new origin — a plain-HTTP server on a loopback port of its own — that
// answers 404 to every path until it is told what to serve. On a closed site the origin is
// closed at once. Like httptest.NewServer, it panics when no loopback port can be opened.
func (s *Site) NewOrigin() *Origin {
	o := &Origin{site: s, routes: map[string]Answer{}, nth: map[string]map[int]Answer{}, counts: map[string]int{}}
	o.server = httptest.NewUnstartedServer(o)
	// The URL is known before the server starts, so no handler can run before it is set.
	o.URL = "http://" + o.server.Listener.Addr().String()
	o.server.Start()
	s.mu.Lock()
	closing := s.closing
	if !closing {
		s.origins = append(s.origins, o)
	}
	s.mu.Unlock()
	if closing {
		o.server.Close()
	}
	return o
}

// Mark is a point in a site's recording; the zero Mark is its beginning.
type Mark struct{ n int }

// Mark returns the current end of the recording: [Site.Since] of it returns only the requests
// that arrive afterwards, e.g. those of a second crawl.
func (s *Site) Mark() Mark {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Mark{len(s.log)}
}

// Requests returns every request the site's origins received so far, in order of arrival.
func (s *Site) Requests() []Request { return s.Since(Mark{}) }

// Since returns the requests that arrived after m, in order of arrival.
func (s *Site) Since(m Mark) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.n >= len(s.log) {
		return nil
	}
	out := make([]Request, 0, len(s.log)-m.n)
	for _, r := range s.log[m.n:] {
		out = append(out, r.clone())
	}
	return out
}

// Await blocks until the recording holds at least n requests — say, until a crawler has reached
// a held answer — and returns nil, or returns ctx's error when ctx ends first, or [ErrClosed]
// when the site is closed first.
func (s *Site) Await(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		have, arrived := len(s.log), s.arrived
		s.mu.Unlock()
		if have >= n {
			return nil
		}
		select {
		case <-arrived:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.closed:
			return ErrClosed
		}
	}
}

// ErrClosed is returned by [Site.Await] when the site is closed before enough requests arrived.
var ErrClosed = errors.New("etiquettetest: the site is closed")

// Unrecorded is the number of requests answered but not recorded because the recording held
// [MaxRecorded] already. The matchers refuse to judge a site that dropped requests.
func (s *Site) Unrecorded() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unrecorded
}

// Close ends every held or delayed answer (those requests get no answer: their connections are
// dropped), then stops every origin and waits for their handlers to return. The recording stays
// readable. Close may be called more than once.
func (s *Site) Close() {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return
	}
	s.closing = true
	close(s.closed)
	origins := slices.Clone(s.origins)
	s.mu.Unlock()
	for _, o := range origins {
		o.server.Close()
	}
}

// arrive records a request as it arrives and returns its place in the log, or -1 when the log
// is full.
func (s *Site) arrive(origin string, r *http.Request) int {
	h := r.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Host", r.Host)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.log) >= s.limit {
		s.unrecorded++
		return -1
	}
	s.log = append(s.log, Request{At: time.Now(), Origin: origin, RemoteAddr: r.RemoteAddr, Method: r.Method, Target: r.URL.RequestURI(), Header: h})
	close(s.arrived)
	s.arrived = make(chan struct{})
	return len(s.log) - 1
}

// finish records what the site answered to the request at place i (-1: not recorded).
func (s *Site) finish(i int, done time.Time, status int, answer http.Header, bodyBytes int64, wellKnown []string) {
	if i < 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &s.log[i]
	r.Done, r.Status, r.Answer, r.BodyBytes, r.WellKnown = done, status, answer, bodyBytes, wellKnown
}
