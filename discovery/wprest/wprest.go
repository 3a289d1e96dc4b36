// Package wprest lists a WordPress site's posts and pages through its REST API, the root a page
// advertises with rel="https://api.w.org/" (a Link header or a <link> in its head). One request
// lists 100 entries, each only its link and modified time (_fields=link,modified_gmt), so a site
// of 1,000 posts costs 10 requests instead of 1,000 page fetches.
//
// A listing answered with 401, 403 or 404 is not offered: [List] reports [ErrNotOffered] and the
// caller crawls the HTML instead. It never works around a refusal (other paths, other
// parameters, credentials).
//
// Bounds: at most Options.MaxPages requests per listing (default 50, so 5,000 entries each); the
// pages past the cap are counted in Listing.SkippedPages. Each response body is read as a stream,
// one entry at a time, and at most 10 MiB of it (the door's cap for kind.API).
package wprest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/politecrawl/etiquette/discovery/discovered"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// PerPage is the number of entries asked for per request, the most WordPress allows.
const PerPage = 100

// DefaultMaxPages is the default cap on requests per listing.
const DefaultMaxPages = 50

// maxBody bounds one response, as the door's cap for kind.API.
const maxBody = 10 << 20

// Errors, for errors.Is.
var (
	// ErrNotOffered: the site answered 401, 403 or 404 (or HTML instead of JSON). Fall back to
	// the HTML crawl; do not try to get around it.
	ErrNotOffered = errors.New("WordPress REST API listing not offered")
	// ErrUnavailable: the site answered another non-2xx status (the door has already backed off
	// and retried where that applies). The entries before were delivered.
	ErrUnavailable = errors.New("WordPress REST API unavailable")
	// ErrMalformed: a response was not the JSON list WordPress sends. The entries before were
	// delivered.
	ErrMalformed = errors.New("WordPress REST API response malformed")
)

// Options are the scope and bounds of one listing run. The zero value keeps the links on the API
// root's origin, with DefaultMaxPages.
type Options struct {
	// Allowed is where entry links may point (see discovered.NewFilter); empty means the API
	// root's origin.
	Allowed string
	// MaxPages caps the requests per listing; 0 means DefaultMaxPages.
	MaxPages int
}

// Result is what the two listings yielded.
type Result struct {
	Posts, Pages Listing
}

// Listing is what one listing (wp/v2/posts or wp/v2/pages) yielded.
type Listing struct {
	Route        string // "wp/v2/posts" or "wp/v2/pages"
	Requests     int    // requests sent
	TotalPages   int    // as X-WP-TotalPages said; 0 when the header was absent
	SkippedPages int    // pages past MaxPages, not requested
	Kept         int    // entries handed to the caller
	NoLastMod    int    // kept entries without a readable modified_gmt
	Dropped      discovered.Dropped
	// Err is why the listing stopped early: wraps ErrNotOffered, ErrUnavailable, ErrMalformed,
	// or the client's error (the door's refusals among them).
	Err error
}

// List requests the posts, then the pages, of the WordPress site whose API root is root
// ("https://example.org/wp-json/", or "https://example.org/?rest_route=/" on a site without
// pretty permalinks) through client, normally the door's, marking every request kind.API.
// Each entry's link, with its modified time, goes to fn as it arrives.
//
// The error joins the listings' errors (see Listing.Err): errors.Is(err, ErrNotOffered) tells
// the caller to crawl the HTML. An error from fn stops everything and is returned as it is.
func List(ctx context.Context, client *http.Client, root string, opt Options, fn func(discovered.URL) error) (Result, error) {
	base, err := url.Parse(root)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return Result{}, fmt.Errorf("wprest: API root %q is not an http(s) URL", root)
	}
	if opt.MaxPages <= 0 {
		opt.MaxPages = DefaultMaxPages
	}
	l := lister{ctx: ctx, client: client, base: base, opt: opt, fn: fn}
	res := Result{Posts: Listing{Route: "wp/v2/posts"}, Pages: Listing{Route: "wp/v2/pages"}}
	for _, li := range []*Listing{&res.Posts, &res.Pages} {
		if err := l.list(li); err != nil {
			return res, err
		}
	}
	return res, errors.Join(res.Posts.Err, res.Pages.Err)
}

type lister struct {
	ctx    context.Context
	client *http.Client
	base   *url.URL
	opt    Options
	fn     func(discovered.URL) error
}

// list pages through one listing, recording its outcome in li; it returns only fn's error.
func (l *lister) list(li *Listing) error {
	filter, err := discovered.NewFilter(l.base.String(), l.opt.Allowed)
	if err != nil {
		li.Err = fmt.Errorf("wprest: %w", err)
		return nil
	}
	defer func() { li.Dropped = filter.Dropped }()
	for page := 1; page <= l.opt.MaxPages; page++ {
		u := l.pageURL(li.Route, page)
		n, total, fnErr, err := l.fetch(u, li, filter)
		li.Requests++
		switch {
		case fnErr != nil:
			return fnErr
		case err != nil:
			li.Err = fmt.Errorf("wprest %s: %w", u, err)
			return nil
		case total > 0:
			li.TotalPages = total
			if page >= total {
				return nil
			}
			if page == l.opt.MaxPages {
				li.SkippedPages = total - page
			}
		case n < PerPage: // without X-WP-TotalPages, a short page is the last
			return nil
		}
	}
	return nil
}

// pageURL is the URL of one page of route, in the form of the advertised root.
func (l *lister) pageURL(route string, page int) string {
	u := *l.base
	q := u.Query()
	if rr, ok := q["rest_route"]; ok {
		prefix := "/"
		if len(rr) > 0 {
			prefix = strings.TrimSuffix(rr[0], "/") + "/"
		}
		q.Set("rest_route", prefix+route)
	} else {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/" + route
		u.RawPath = ""
	}
	q.Set("per_page", strconv.Itoa(PerPage))
	q.Set("_fields", "link,modified_gmt")
	q.Set("page", strconv.Itoa(page))
	u.RawQuery = q.Encode()
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// entry is one element of a listing, in the fields asked for.
type entry struct {
	Link        string `json:"link"`
	ModifiedGMT string `json:"modified_gmt"`
}

// fetch requests one page and hands its entries on. It returns how many entries the page held,
// X-WP-TotalPages (0 when absent or unreadable), fn's error, and any other error.
func (l *lister) fetch(u string, li *Listing, filter *discovered.Filter) (n, total int, fnErr, err error) {
	req, err := http.NewRequestWithContext(l.ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, 0, nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := l.client.Do(kind.Mark(req, kind.API))
	if err != nil {
		return 0, 0, nil, err
	}
	defer func() {
		// Read a little of what is left so the connection can be reused; the door frees the
		// origin's slot on Close either way.
		io.CopyN(io.Discard, resp.Body, 4<<10)
		resp.Body.Close()
	}()
	switch {
	case resp.StatusCode == http.StatusUnauthorized, resp.StatusCode == http.StatusForbidden, resp.StatusCode == http.StatusNotFound:
		return 0, 0, nil, fmt.Errorf("%w: %s", ErrNotOffered, resp.Status)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return 0, 0, nil, fmt.Errorf("%w: %s", ErrUnavailable, resp.Status)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/html" || mt == "application/xhtml+xml" {
		return 0, 0, nil, fmt.Errorf("%w: answered %s, not JSON", ErrNotOffered, mt)
	}
	total, _ = strconv.Atoi(strings.TrimSpace(resp.Header.Get("X-WP-TotalPages")))

	dec := json.NewDecoder(io.LimitReader(resp.Body, maxBody))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return 0, 0, nil, fmt.Errorf("%w: not a JSON list", ErrMalformed)
	}
	for dec.More() {
		var e entry
		if err := dec.Decode(&e); err != nil {
			return n, 0, nil, fmt.Errorf("%w: entry %d: %v", ErrMalformed, n+1, err)
		}
		n++
		loc, ok := filter.Keep(e.Link)
		if !ok {
			continue
		}
		d := discovered.URL{Loc: loc}
		// modified_gmt is the site's time in UTC, without a zone ("2024-03-01T10:00:00").
		if t, err := time.ParseInLocation("2006-01-02T15:04:05", e.ModifiedGMT, time.UTC); err == nil {
			d.LastMod = t
		} else {
			li.NoLastMod++
		}
		li.Kept++
		if err := l.fn(d); err != nil {
			return n, 0, err, nil
		}
	}
	if _, err := dec.Token(); err != nil {
		return n, 0, nil, fmt.Errorf("%w: the list does not end: %v", ErrMalformed, err)
	}
	return n, total, nil, nil
}
