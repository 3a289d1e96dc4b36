package crawler

// This file decides how one URL is fetched: a GET marked as a page, the frontier told when the
// request passed the door's clock, the body read to its end, and — for an HTML page that may be
// followed — its links taken from the stream and queued one level deeper. A start page's Link
// header and typed head links go to the planner.

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"

	"github.com/politecrawl/etiquette/discovery/links"
	"github.com/politecrawl/etiquette/discovery/plan"
	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// fetch GETs it and reads the response to its end. For a start page that got a 2xx HTML answer
// it also returns what the page advertises, for the planner.
func (r *run) fetch(ctx context.Context, it frontier.Item) (Result, *plan.Page) {
	res := Result{URL: it.URL, Kind: kind.HTML, FoundVia: it.Via, Depth: it.Depth}
	// The transport asks for a connection only once the door's clock has granted the slot (or
	// the cache answered without one): from then on the origin's next URL may be dispatched. The
	// robots.txt fetch a first request triggers inherits the trace; its connection counts too,
	// as the clock has then granted the origin's first start.
	var once sync.Once
	granted := func() { once.Do(func() { r.f.Granted(it) }) }
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GetConn: func(string) { granted() }})
	ctx = cache.WithLastModified(ctx, r.lastMod(it), r.cfg.LastmodTrust)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, it.URL, nil)
	if err != nil {
		res.Err = err
		return res, nil
	}
	req = kind.Mark(req, kind.HTML)
	// Servers that negotiate then send HTML rather than JSON or a PDF, also through a client
	// that is not the door (which sets the kind's Accept itself).
	req.Header.Set("Accept", kind.HTML.Accept())
	resp, err := r.cfg.Client.Do(req)
	granted()
	if err != nil {
		res.Err = err
		return res, nil
	}
	defer resp.Body.Close()
	res.Status = resp.StatusCode
	res.FinalURL = resp.Request.URL.String()
	body := &countingReader{r: resp.Body}
	var page *plan.Page
	page, res.Err = r.read(it, resp, bufio.NewReader(body))
	res.Bytes = body.n
	return res, page
}

// lastMod is when a listing said it last changed: its own entry's date, or, for a start page
// queued before any listing was read, the date a listing gave it later.
func (r *run) lastMod(it frontier.Item) time.Time {
	if it.LastMod.IsZero() && it.Via == frontier.ViaStart && r.planner != nil {
		return r.planner.LastMod(it.URL)
	}
	return it.LastMod
}

// read reads the body to its end, extracting links when the page may be followed: a 2xx HTML
// page, above MaxDepth, without X-Robots-Tag nofollow. Non-HTML bodies are read and discarded
// (the door caps them). A start page's typed head links are read even when its links are not
// followed, and returned for the planner.
func (r *run) read(it frontier.Item, resp *http.Response, body *bufio.Reader) (*plan.Page, error) {
	follow, html := r.follows(it, resp, body)
	var page *plan.Page
	if html && it.Via == frontier.ViaStart && r.planner != nil {
		page = &plan.Page{URL: resp.Request.URL, Header: resp.Header}
	}
	if follow || page != nil {
		found := func(l links.Link) { r.push(it, l) }
		if !follow {
			found = nil
		}
		s, err := links.Extract(body, resp.Request.URL, r.cfg.Links, found)
		if page != nil {
			page.Head = s.Head
		}
		if s.OverLimit > 0 {
			r.overLimit.Add(int64(s.OverLimit))
			r.log.Warn("crawler: a page has more links than the limit; the rest are not followed",
				"url", resp.Request.URL.String(), "followed", s.Links, "not_followed", s.OverLimit, "limit", cmp.Or(r.cfg.Links.MaxLinks, links.DefaultMaxLinks))
		}
		switch {
		case errors.Is(err, links.ErrTokenTooLong):
			r.log.Warn("crawler: a page's links were read only up to an over-long token", "url", resp.Request.URL.String(), "err", err)
		case err != nil:
			return page, err
		}
	}
	_, err := io.Copy(io.Discard, body)
	return page, err
}

// follows reports whether the page is a 2xx HTML page (html) and whether its links are to be
// queued (follow).
func (r *run) follows(it frontier.Item, resp *http.Response, body *bufio.Reader) (follow, html bool) {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return false, false
	}
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		// RFC 9110 §8.3: without a Content-Type the recipient may sniff.
		head, _ := body.Peek(512)
		ct = http.DetectContentType(head)
	}
	mt, _, _ := mime.ParseMediaType(ct)
	html = mt == "text/html" || mt == "application/xhtml+xml"
	follow = html && (r.cfg.MaxDepth == 0 || it.Depth < r.cfg.MaxDepth) && !links.HeaderNofollow(resp.Header)
	return follow, html
}

// push queues a link of the page it, one level deeper, when it is followed and in scope.
func (r *run) push(it frontier.Item, l links.Link) {
	if l.Nofollow || !r.scope(l.URL) {
		return
	}
	u := l.URL.String()
	if _, err := r.f.Push(frontier.Entry{URL: u, Depth: it.Depth + 1, Via: frontier.ViaLink}); err != nil {
		r.log.Debug("crawler: the frontier refused a link", "page", it.URL, "url", u, "err", err)
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
