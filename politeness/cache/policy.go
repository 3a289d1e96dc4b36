package cache

// This file holds the crawler's rules on top of RFC 9111, keyed on the request's kind: which
// kinds are always revalidated, how long a stored robots.txt may be used, and the minimum revisit
// interval.

import (
	"net/http"
	"slices"
	"time"

	"github.com/politecrawl/etiquette/politeness/kind"
)

// robotsMaxAge is how long a stored robots.txt is used: RFC 9309 §2.4 says a crawler should not
// use a cached copy for more than 24 hours unless the origin is unreachable, whatever freshness
// the response claims and whichever process stored it.
const robotsMaxAge = 24 * time.Hour

// alwaysRevalidates reports whether req's kind must reach the origin on every use of e, which
// the policy asks only when a validator makes that a cheap conditional request.
func (t *Transport) alwaysRevalidates(req *http.Request, e *Entry) bool {
	if !slices.Contains(t.o.AlwaysRevalidate, kind.Of(req)) {
		return false
	}
	return e.Header.Get("ETag") != "" || e.Header.Get("Last-Modified") != ""
}

// limitRobots caps the freshness lifetime of a stored robots.txt at robotsMaxAge.
func limitRobots(req *http.Request, life time.Duration) time.Duration {
	if kind.Of(req) == kind.Robots {
		return min(life, robotsMaxAge)
	}
	return life
}

// pastRobotsDay reports that a stored robots.txt is too old to be served stale for any reason
// but an unreachable origin (stale-if-error and a disconnected cache still may, revalidate.go).
func pastRobotsDay(req *http.Request, age time.Duration) bool {
	return age >= robotsMaxAge && kind.Of(req) == kind.Robots
}

// withinMinRevisit reports whether e was heard from the origin less than Options.MinRevisit ago.
// It is measured from when this cache last heard from the origin, not from the response's age:
// the policy limits how often the crawler asks, whatever a CDN's Age says.
func (t *Transport) withinMinRevisit(e *Entry, now time.Time) bool {
	return t.o.MinRevisit > 0 && now.Sub(e.ResponseTime) < t.o.MinRevisit
}
