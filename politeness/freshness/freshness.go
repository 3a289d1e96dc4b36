// Package freshness decides how long a received HTTP response may be reused: its age and its
// freshness lifetime (RFC 9111 §4.2), from the header fields that say so — Cache-Control, Age,
// Date, Expires and Last-Modified.
//
// It is the one home of these rules for the project: the cache (politeness/cache) decides with
// it whether a stored response is fresh, and the robots.txt keeper (politeness/robots) how long
// a fetched robots.txt is kept. Most callers want [Response.Lifetime] and [Response.Age];
// [CacheControl] reads the directives that change what a cache may do with a response.
//
// Go's standard library parses none of these fields for caching purposes (http.ParseTime, which
// this package uses, converts a date but does not check its grammar), and gregjones/httpcache's
// parsers are the source of several conformance failures (quoted strings, case, duplicates,
// lenient dates), so the project keeps these few small parsers.
package freshness

import (
	"net/http"
	"strings"
	"time"
)

// Response is what freshness is computed from: a response's status and header fields, and the
// times that bracket the exchange that produced it (or last validated it), read on the cache's
// own clock.
type Response struct {
	Status int
	Header http.Header
	// RequestTime is when the request was sent, ResponseTime when the response was received.
	RequestTime, ResponseTime time.Time
}

// Heuristic is the freshness given to a response that states none (RFC 9111 §4.2.2): Fraction of
// the time since its Last-Modified, at most Max. The zero value gives none.
type Heuristic struct {
	Fraction float64
	Max      time.Duration
}

// Lifetime is the freshness lifetime of RFC 9111 §4.2.1: max-age, else Expires − Date, else the
// heuristic for a heuristically cacheable status (or public) with Last-Modified, else 0. An
// invalid max-age or Expires makes the response stale rather than guessing (§4.2.1, §5.3).
// Directives are read from r.Header; pass cc when the caller has parsed them already, or nil.
func (r Response) Lifetime(cc Directives, h Heuristic) time.Duration {
	if cc == nil {
		cc = CacheControl(r.Header)
	}
	if cc.Has("max-age") {
		d, _ := cc.Seconds("max-age")
		return d
	}
	if len(r.Header.Values("Expires")) > 0 {
		exp, ok := headerDate(r.Header, "Expires")
		if !ok {
			return 0
		}
		return max(0, exp.Sub(r.date()))
	}
	if h.Fraction > 0 && (HeuristicStatus(r.Status) || cc.Has("public")) {
		if lm, ok := headerDate(r.Header, "Last-Modified"); ok {
			if since := r.date().Sub(lm); since > 0 {
				return min(time.Duration(float64(since)*h.Fraction), h.Max)
			}
		}
	}
	return 0
}

// Explicit reports whether the response states its freshness (a max-age directive or an Expires
// field, valid or not), as opposed to leaving it to a heuristic.
func (r Response) Explicit(cc Directives) bool {
	if cc == nil {
		cc = CacheControl(r.Header)
	}
	return cc.Has("max-age") || len(r.Header.Values("Expires")) > 0
}

// Age is the response's current age at now (RFC 9111 §4.2.3): the larger of the apparent age
// (ResponseTime − Date) and the corrected Age field, plus the time since it was received.
func (r Response) Age(now time.Time) time.Duration {
	age, _ := ageValue(r.Header)
	apparent := max(0, r.ResponseTime.Sub(r.date()))
	corrected := age + r.ResponseTime.Sub(r.RequestTime)
	return max(apparent, corrected) + now.Sub(r.ResponseTime)
}

// date is the response's Date, or the time it was received when Date is absent or invalid.
func (r Response) date() time.Time {
	if d, ok := headerDate(r.Header, "Date"); ok {
		return d
	}
	return r.ResponseTime
}

// ageValue returns the Age field's value (RFC 9111 §5.1). Only the first member of the first line
// counts; a value that is not delta-seconds (negative, fractional, alphabetic) is ignored, as the
// cache-tests suite expects, and values above 2^31 seconds are capped.
func ageValue(h http.Header) (time.Duration, bool) {
	lines := h.Values("Age")
	if len(lines) == 0 {
		return 0, false
	}
	first, _, _ := strings.Cut(lines[0], ",")
	return parseDelta(strings.Trim(first, " \t"))
}

// HeuristicStatus reports whether responses with code are heuristically cacheable (RFC 9110
// §15.1): without explicit freshness they may be reused for a heuristic lifetime.
func HeuristicStatus(code int) bool {
	switch code {
	case 200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501:
		return true
	}
	return false
}
