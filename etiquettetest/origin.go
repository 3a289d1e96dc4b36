// This file decides which answer an origin gives to a request, and records it.

package etiquettetest

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Origin is one scheme://host:port of a [Site]: an httptest server whose answers the test
// builds, path by path, with [Origin.Serve] and its shorthands. Every method may be called at
// any time, also while a crawl runs, and returns the origin so calls can be chained. Origins are
// made by [Site.NewOrigin]; the zero Origin is not usable.
type Origin struct {
	// URL is the origin's base URL, "http://127.0.0.1:40123", without a trailing slash.
	URL string

	site   *Site
	server *httptest.Server

	mu        sync.Mutex
	routes    map[string]Answer         // by URL path
	nth       map[string]map[int]Answer // by URL path, then 1-based arrival count
	counts    map[string]int            // requests so far, by URL path
	otherwise *Answer
}

// Addr is the origin's host:port, the key under which an operator counts a crawler's load.
func (o *Origin) Addr() string { return o.server.Listener.Addr().String() }

// Serve answers requests for path (the URL path; the query does not matter) with a.
func (o *Origin) Serve(path string, a Answer) *Origin {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.routes[path] = a
	return o
}

// Nth answers the n-th request for path (counted from 1, in order of arrival, every method and
// query alike) with a instead of the path's usual answer: Nth("/p", 1, Status(429).RetryAfter(time.Second)).
// An n below 1 never matches.
func (o *Origin) Nth(path string, n int, a Answer) *Origin {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.nth[path] == nil {
		o.nth[path] = map[int]Answer{}
	}
	o.nth[path][n] = a
	return o
}

// Otherwise answers every path that has no answer of its own with a; without it such paths
// are answered 404.
func (o *Origin) Otherwise(a Answer) *Origin {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.otherwise = &a
	return o
}

// Robots serves text as /robots.txt. Without it, robots.txt is answered 404, which RFC 9309
// §2.3.1.3 reads as "everything allowed"; serve another status or a hang with
// Serve("/robots.txt", …).
func (o *Origin) Robots(text string) *Origin { return o.Serve("/robots.txt", Text(text)) }

// Page serves an HTML page titled title that links to links; shorthand for
// Serve(path, HTMLPage(title, links...)).
func (o *Origin) Page(path, title string, links ...string) *Origin {
	return o.Serve(path, HTMLPage(title, links...))
}

// Requests returns the requests this origin received, in order of arrival.
func (o *Origin) Requests() []Request {
	var out []Request
	for _, r := range o.site.Requests() {
		if r.Origin == o.URL {
			out = append(out, r)
		}
	}
	return out
}

// answerFor counts the request and picks its answer.
func (o *Origin) answerFor(path string) Answer {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.counts[path]++
	if a, ok := o.nth[path][o.counts[path]]; ok {
		return a
	}
	if a, ok := o.routes[path]; ok {
		return a
	}
	if o.otherwise != nil {
		return *o.otherwise
	}
	return Status(http.StatusNotFound)
}

// ServeHTTP records the request, waits as its answer asks, answers and records the answer.
func (o *Origin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := o.site.arrive(o.URL, r)
	a := o.answerFor(r.URL.Path).chosen(r).forHop(r)
	if !a.wait(r.Context(), o.site.closed) {
		o.site.finish(i, time.Now(), 0, nil, 0, nil)
		// The documented way to drop the connection without an answer: a crawler must see a
		// hang end as a failure, not as an empty 200.
		panic(http.ErrAbortHandler)
	}
	rw := &recordingWriter{ResponseWriter: w}
	err := a.write(rw, r)
	done := rw.lastWrite
	if done.IsZero() {
		// Nothing was written yet: the server sends the head only after the handler returns.
		done = time.Now()
	}
	status := rw.status
	if err != nil && status == 0 {
		status = http.StatusInternalServerError
	}
	o.site.finish(i, done, status, rw.head, rw.bodyBytes, o.wellKnown(r, a, rw.head))
}

// wellKnown lists the /.well-known/ URLs the answer mentions. A 304 counts its body: the
// client holds the copy it revalidated.
func (o *Origin) wellKnown(r *http.Request, a Answer, head http.Header) []string {
	base, err := url.Parse(o.URL + r.URL.Path)
	if err != nil {
		return nil
	}
	text := strings.Join(head.Values("Location"), "\n") + "\n" + strings.Join(head.Values("Link"), "\n")
	if r.Method != http.MethodHead {
		text += "\n" + string(a.content())
	}
	return wellKnownMentions(base, text)
}

// recordingWriter remembers the status and headers sent, and when the last write began.
type recordingWriter struct {
	http.ResponseWriter
	status    int
	head      http.Header
	lastWrite time.Time
	bodyBytes int64
}

func (w *recordingWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status, w.head = code, w.Header().Clone()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	w.lastWrite = time.Now()
	n, err := w.ResponseWriter.Write(p)
	w.bodyBytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the server's writer.
func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
