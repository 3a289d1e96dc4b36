// This file decides how an origin answers one request: status, headers, body, validators and
// any wait before the answer leaves.

package etiquettetest

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"html"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Answer is what an origin sends for a path: a status, headers, a body, and optionally a wait
// before sending. Build one with [Text], [HTMLPage], [Status], [Redirect] and the other
// constructors, and refine it with its methods; each method returns a changed copy, so one
// Answer can be the base of several. The zero Answer is an empty 200 text/plain.
type Answer struct {
	status      int
	contentType string
	body        []byte
	page        *htmlPage // set by HTMLPage: rendered when served, so Alternate can add to its head
	header      http.Header
	etag        string
	modified    time.Time
	gzipped     bool
	held        bool
	release     <-chan struct{}
	delay       time.Duration
	hops        int
	final       *Answer
	choose      func(*http.Request) Answer // set by Func
}

// Text is a 200 answer with a text/plain body.
func Text(body string) Answer {
	return Answer{contentType: "text/plain; charset=utf-8", body: []byte(body)}
}

// Status is an answer with the given status code and its reason phrase as a text/plain body:
// Status(404), Status(503).RetryAfter(2*time.Second). A code that is not a final status
// (200–599) is answered 500 with a body that names it.
func Status(code int) Answer {
	if code < 200 || code > 599 {
		a := Text(fmt.Sprintf("etiquettetest: Status(%d) is not a final HTTP status (200-599)\n", code))
		a.status = http.StatusInternalServerError
		return a
	}
	a := Text(http.StatusText(code) + "\n")
	a.status = code
	return a
}

// Redirect is a redirect with the given 3xx code to target, which may be a path on the same
// origin or an absolute URL of another origin.
func Redirect(code int, target string) Answer {
	return Status(code).Header("Location", target)
}

// RedirectChain answers the path with a chain of hops redirects (302) that stays on the path —
// "?hop=1", "?hop=2", … — before final answers: RedirectChain(6, Text(robots)) for a robots.txt
// six hops away, one more than RFC 9309 §2.3.1.2 asks a crawler to follow. With hops < 1 it is
// final.
func RedirectChain(hops int, final Answer) Answer {
	if hops < 1 {
		return final
	}
	a := Status(http.StatusFound)
	a.hops, a.final = hops, &final
	return a
}

// Func is an answer chosen afresh for each request by choose, for what the other parts cannot
// express: an answer that depends on requests to other paths (the sixth page request of any
// path is slow), or on the moment it is asked for (a Retry-After date a few seconds ahead). The
// answer choose returns is sent as it is, waits and validators included; the request is recorded
// like any other. The methods of the Answer that Func returns have no effect — refine the answers
// choose returns instead. choose may be called from several requests at once. When choose is nil
// or returns another Func answer, the request is answered 500 with a body that says so.
func Func(choose func(r *http.Request) Answer) Answer {
	if choose == nil {
		return funcMisuse("etiquettetest: Func(nil): no function to choose the answer\n")
	}
	return Answer{choose: choose}
}

func funcMisuse(text string) Answer {
	a := Text(text)
	a.status = http.StatusInternalServerError
	return a
}

// chosen returns the answer for r: a Func answer's choice, or a itself.
func (a Answer) chosen(r *http.Request) Answer {
	if a.choose == nil {
		return a
	}
	c := a.choose(r)
	if c.choose != nil {
		return funcMisuse("etiquettetest: a Func answer chose another Func answer\n")
	}
	return c
}

// ContentType sets the answer's Content-Type, e.g. "text/html" for a body built by hand with
// [Text]; it replaces the one the constructor chose. [Answer.Gzipped] still sends
// application/gzip.
func (a Answer) ContentType(mediaType string) Answer {
	a.contentType = mediaType
	return a
}

// ETag sets the entity tag the answer carries; a request whose If-None-Match matches it is
// answered 304 Not Modified without a body (RFC 9110 §13.1.2). A tag without quotes is quoted.
func (a Answer) ETag(tag string) Answer {
	if !strings.HasSuffix(tag, `"`) {
		tag = strconv.Quote(tag)
	}
	a.etag = tag
	return a
}

// LastModified sets the answer's Last-Modified; a request whose If-Modified-Since is not
// earlier (and that carries no If-None-Match) is answered 304 Not Modified (RFC 9110 §13.1.3).
func (a Answer) LastModified(t time.Time) Answer {
	a.modified = t
	return a
}

// SetCookie adds a Set-Cookie header for c. [SessionCookie], [TrackingCookie] and
// [ConsentCookie] are the kinds of cookie real sites set. A nil cookie, or one whose name is not
// a valid cookie name, adds nothing.
func (a Answer) SetCookie(c *http.Cookie) Answer {
	if line := c.String(); line != "" {
		return a.Header("Set-Cookie", line)
	}
	return a
}

// RetryAfter adds Retry-After with d in whole seconds, rounded up (RFC 9110 §10.2.3); a
// negative d is sent as 0. For the HTTP-date form, use
// Header("Retry-After", t.UTC().Format(http.TimeFormat)).
func (a Answer) RetryAfter(d time.Duration) Answer {
	return a.Header("Retry-After", strconv.FormatInt(int64(math.Ceil(max(d, 0).Seconds())), 10))
}

// Header adds a header field to the answer.
func (a Answer) Header(key, value string) Answer {
	a.header = a.header.Clone()
	if a.header == nil {
		a.header = http.Header{}
	}
	a.header.Add(key, value)
	return a
}

// HoldUntil makes the origin wait until release is closed before answering. The wait also ends
// when the client gives up or the site is closed; then nothing is answered and the connection is
// dropped. A nil release holds until one of those: a hanging answer.
func (a Answer) HoldUntil(release <-chan struct{}) Answer {
	a.held, a.release = true, release
	return a
}

// Delay makes the origin wait d before answering: a slow answer (d ≤ 0: no wait). Like [Answer.HoldUntil], the
// wait ends early, with nothing answered, when the client gives up or the site is closed.
func (a Answer) Delay(d time.Duration) Answer {
	a.delay = d
	return a
}

// Gzipped sends the body gzip-compressed as a file, with Content-Type application/gzip — the
// way sitemap.xml.gz is served — rather than as a Content-Encoding.
func (a Answer) Gzipped() Answer {
	a.gzipped = true
	return a
}

// Alternate links the answer to an alternate representation (a feed, a translation): an HTML
// page gets <link rel="alternate" type="mediaType" href="href"> in its head, any other answer a
// Link header (RFC 8288).
func (a Answer) Alternate(mediaType, href string) Answer {
	if a.page == nil {
		return a.Header("Link", fmt.Sprintf("<%s>; rel=\"alternate\"; type=%q", href, mediaType))
	}
	p := *a.page
	p.alternates = append(slices.Clone(p.alternates), [2]string{mediaType, href})
	a.page = &p
	return a
}

// forHop returns the answer for this request of a redirect chain: the next hop or the final one.
func (a Answer) forHop(r *http.Request) Answer {
	if a.hops <= 0 || a.final == nil {
		return a
	}
	hop, _ := strconv.Atoi(r.URL.Query().Get("hop"))
	if hop >= a.hops {
		return *a.final
	}
	next := url.URL{Path: r.URL.Path, RawQuery: "hop=" + strconv.Itoa(hop+1)}
	return Redirect(http.StatusFound, next.String())
}

// wait holds the answer as HoldUntil and Delay ask; it reports false when the client gave up or
// the site closed first.
func (a Answer) wait(ctx context.Context, closed <-chan struct{}) bool {
	if a.delay > 0 {
		// A timer, not a sleep: a closing site or a departing client ends the wait at once.
		t := time.NewTimer(a.delay)
		defer t.Stop()
		if !waitFor(ctx, t.C, closed) {
			return false
		}
	}
	return !a.held || waitFor(ctx, a.release, closed)
}

// waitFor waits for ch (forever when ch is nil) and reports false when ctx or closed ends first.
func waitFor[T any](ctx context.Context, ch <-chan T, closed <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	case <-closed:
		return false
	}
}

// content is the body before any gzip.
func (a Answer) content() []byte {
	if a.page != nil {
		return a.page.render()
	}
	return a.body
}

// write sends the answer. A 200 goes through http.ServeContent, which implements conditional
// requests (304 on a matching If-None-Match or If-Modified-Since), HEAD and ranges.
func (a Answer) write(w http.ResponseWriter, r *http.Request) error {
	body, contentType := a.content(), a.contentType
	if a.gzipped {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(body); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		body, contentType = buf.Bytes(), "application/gzip"
	}
	h := w.Header()
	for k, vs := range a.header {
		h[k] = append(h[k], vs...)
	}
	if contentType == "" {
		contentType = "text/plain; charset=utf-8"
	}
	h.Set("Content-Type", contentType)
	if a.etag != "" {
		h.Set("ETag", a.etag)
	}
	status := a.status
	if status == 0 || status == http.StatusOK {
		http.ServeContent(w, r, "", a.modified, bytes.NewReader(body))
		return nil
	}
	if !a.modified.IsZero() {
		h.Set("Last-Modified", a.modified.UTC().Format(http.TimeFormat))
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return nil
	}
	_, err := w.Write(body)
	return err
}

// htmlPage is an HTML document with a title, links and alternates.
type htmlPage struct {
	title      string
	links      []string
	alternates [][2]string // media type, href
}

func (p htmlPage) render() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html>\n<html><head><title>%s</title>\n", html.EscapeString(p.title))
	for _, alt := range p.alternates {
		fmt.Fprintf(&b, "<link rel=\"alternate\" type=\"%s\" href=\"%s\">\n", html.EscapeString(alt[0]), html.EscapeString(alt[1]))
	}
	fmt.Fprintf(&b, "</head><body>\n<h1>%s</h1>\n<ul>\n", html.EscapeString(p.title))
	for _, l := range p.links {
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", html.EscapeString(l), html.EscapeString(l))
	}
	b.WriteString("</ul>\n</body></html>\n")
	return []byte(b.String())
}
