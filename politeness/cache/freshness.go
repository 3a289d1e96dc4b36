package cache

// This file decides whether a stored response may be served without asking the origin (RFC 9111
// §4.2, RFC 5861), with the crawler policy of policy.go applied.

import (
	"net/http"
	"time"

	"github.com/politecrawl/etiquette/politeness/freshness"
)

// reuseVerdict is what RoundTrip does with a stored response that matches the request.
type reuseVerdict int

const (
	// mustAsk: the origin is asked (revalidate.go).
	mustAsk reuseVerdict = iota
	serveFresh
	serveStale
	// serveStaleAndRevalidate: stale-while-revalidate (RFC 5861 §3).
	serveStaleAndRevalidate
)

// reuse decides how the stored response e answers req (with request directives rcc) at now.
func (t *Transport) reuse(req *http.Request, e *Entry, rcc freshness.Directives, now time.Time) reuseVerdict {
	r := e.response()
	cc := freshness.CacheControl(e.Header)
	age := r.Age(now)
	life := t.lifetime(req, r, cc)

	respNoCache := cc.Has("no-cache") && cc["no-cache"] == ""
	if respNoCache || rcc.Has("no-cache") || t.alwaysRevalidates(req, e) {
		return mustAsk
	}
	fresh := life > age
	if v, ok := rcc.Seconds("max-age"); ok && age > v {
		fresh = false
	} else if rcc.Has("max-age") && !ok {
		fresh = false
	}
	if v, ok := rcc.Seconds("min-fresh"); ok && life-age < v {
		fresh = false
	}
	if fresh {
		return serveFresh
	}
	if cc.Has("must-revalidate") || pastRobotsDay(req, age) {
		return mustAsk
	}
	if d, ok := cc.Seconds("stale-while-revalidate"); ok && age-life <= d {
		return serveStaleAndRevalidate
	}
	if ms, present := rcc["max-stale"]; present {
		// A bare max-stale accepts any staleness (RFC 9111 §5.2.1.2).
		if v, ok := rcc.Seconds("max-stale"); ms == "" || (ok && age-life <= v) {
			return serveStale
		}
	}
	if t.withinMinRevisit(e, now) {
		return serveStale
	}
	return mustAsk
}

// lifetime is the freshness lifetime of a stored response to req (RFC 9111 §4.2.1, the heuristic
// of §4.2.2 as the options set it), with the crawler's limit on robots.txt applied.
func (t *Transport) lifetime(req *http.Request, r freshness.Response, cc freshness.Directives) time.Duration {
	return limitRobots(req, r.Lifetime(cc, t.heuristic))
}

// response is e as package freshness reads it.
func (e *Entry) response() freshness.Response {
	return freshness.Response{Status: e.Status, Header: e.Header, RequestTime: e.RequestTime, ResponseTime: e.ResponseTime}
}
