package cache

// This file decides when a listing's statement of when a page last changed (a sitemap's
// <lastmod>, a feed entry's updated time, an API's modified time) lets a stored copy answer
// without asking the origin at all.

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/politecrawl/etiquette/politeness/freshness"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// ReasonHeader is the private response header in which the transport says why it served a
// stored response without asking the origin, when the reason is not RFC 9111's own; read it
// with [ReasonOf]. Like [StatusHeader] it is never stored, and the door strips it.
const ReasonHeader = "Etiquette-Cache-Reason"

// ReasonLastModified is the reason of a stored response served on the strength of
// [WithLastModified].
const ReasonLastModified = "lastmod"

// ReasonOf returns why the cache served resp as it did beyond RFC 9111 ([ReasonLastModified]),
// or "".
func ReasonOf(resp *http.Response) string {
	if resp == nil {
		return ""
	}
	return resp.Header.Get(ReasonHeader)
}

type lastModKey struct{}

type lastModHint struct {
	at    time.Time
	trust time.Duration
}

// WithLastModified returns a copy of ctx telling the cache that the resource requested with it
// last changed at lastMod, as a listing of the site states it, and that such a statement is
// trusted for copies younger than trust. A request with the hint is answered from a stored 2xx
// response, without contacting the origin, when
//
//   - the stored response was produced at or after lastMod (its Date, else when it was received),
//   - this cache heard it from the origin (received or revalidated it) less than trust ago,
//   - neither the request nor the response says no-cache, the response does not say
//     must-revalidate, and the request's kind is not one always revalidated (robots.txt,
//     sitemaps, llms.txt, feeds).
//
// Otherwise the request proceeds as without the hint (a conditional request when the stored
// copy is stale). The answer reports [Fresh], with reason [ReasonLastModified]. A listing's date
// can be wrong, so trust bounds how long it is believed: past it the copy is revalidated anyway.
// A zero lastMod, or trust ≤ 0, leaves ctx as it is.
func WithLastModified(ctx context.Context, lastMod time.Time, trust time.Duration) context.Context {
	if lastMod.IsZero() || trust <= 0 {
		return ctx
	}
	return context.WithValue(ctx, lastModKey{}, lastModHint{at: lastMod, trust: trust})
}

// unchangedSince reports whether req's last-modified hint lets e answer it at now.
func (t *Transport) unchangedSince(req *http.Request, e *Entry, rcc freshness.Directives, now time.Time) bool {
	hint, ok := req.Context().Value(lastModKey{}).(lastModHint)
	if !ok || e.Status < 200 || e.Status > 299 || rcc.Has("no-cache") {
		return false
	}
	if slices.Contains(t.o.AlwaysRevalidate, kind.Of(req)) {
		return false
	}
	cc := freshness.CacheControl(e.Header)
	if cc.Has("no-cache") || cc.Has("must-revalidate") {
		return false
	}
	produced := e.ResponseTime
	if d, err := http.ParseTime(e.Header.Get("Date")); err == nil {
		produced = d
	}
	return !produced.Before(hint.at) && now.Sub(e.ResponseTime) < hint.trust
}
