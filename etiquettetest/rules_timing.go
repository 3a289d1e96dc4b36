// This file decides the rules about when a crawler's requests arrive: rate, concurrency and
// the pauses a site asks for.

package etiquettetest

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// StartAtMostPerSecond expects no one-second window [t, t+1s) of any host:port's log to hold
// more than n arrivals — the count an operator makes. For each host:port that breaks it, the
// offences are the requests of its busiest window.
func StartAtMostPerSecond(n int) Rule {
	if n < 1 {
		return invalid("StartAtMostPerSecond(%d): the rate must be at least 1", n)
	}
	return Rule{expect: fmt.Sprintf("at most %d request starts in any second per host:port", n), judge: func(reqs []Request) []Offence {
		var out []Offence
		for _, group := range byHostPort(reqs) {
			// group is in order of arrival; [first, last) is the window starting at group[first].
			bestFirst, bestLen := 0, 0
			last := 0
			for first := range group {
				for last < len(group) && group[last].At.Sub(group[first].At) < time.Second {
					last++
				}
				if last-first > bestLen {
					bestFirst, bestLen = first, last-first
				}
			}
			if bestLen <= n {
				continue
			}
			from := group[bestFirst].At
			for i, r := range group[bestFirst : bestFirst+bestLen] {
				out = append(out, Offence{r, fmt.Sprintf("start %d of %d within one second from %s", i+1, bestLen, from.Format("15:04:05.000"))})
			}
		}
		return sortByArrival(out)
	}}
}

// KeepAtMostInFlight expects no host:port ever to be answering more than n requests at once.
// A request is in flight from its arrival (At) until the site began writing the last part of its
// answer (Done), or to the end of the recording when it has not been answered; a request that
// arrives exactly when another's answer was done does not overlap it. The offences are the
// requests that arrived while n others were in flight.
func KeepAtMostInFlight(n int) Rule {
	if n < 1 {
		return invalid("KeepAtMostInFlight(%d): the cap must be at least 1", n)
	}
	return Rule{expect: fmt.Sprintf("at most %d requests in flight at once per host:port", n), judge: func(reqs []Request) []Offence {
		var out []Offence
		for _, group := range byHostPort(reqs) {
			var active []Request
			for _, r := range group {
				active = slices.DeleteFunc(active, func(q Request) bool { return !q.Done.IsZero() && !q.Done.After(r.At) })
				if len(active) >= n {
					var others []string
					for _, q := range active {
						others = append(others, fmt.Sprintf("%s %s since %s", q.Method, q.Target, q.At.Format("15:04:05.000")))
					}
					out = append(out, Offence{r, fmt.Sprintf("arrived while %d others were in flight: %s", len(active), strings.Join(others, "; "))})
				}
				active = append(active, r)
			}
		}
		return sortByArrival(out)
	}}
}

// RetryAfterTolerance is the slack [WaitAfterRetryAfter] allows at each end of a pause. At the
// start, a request that arrives on another connection within it of the answer may have been
// sent before the client could read that answer (on the same connection there is no slack:
// HTTP/1.1 without pipelining sends the next request only after reading the answer). At the
// end, it absorbs the difference between the site's clock and the client's, which an HTTP-date
// Retry-After is measured on.
const RetryAfterTolerance = 50 * time.Millisecond

// WaitAfterRetryAfter expects a crawler to send nothing to an origin while a Retry-After it was
// given runs (RFC 9110 §10.2.3): after an answer with status 3xx, 429 (RFC 6585 §4) or 503 that
// carries Retry-After — delay-seconds counted from when the answer was sent (Request.Done), or an
// HTTP-date — no request may arrive at that origin until the pause is over, within
// [RetryAfterTolerance]. Requests that arrived before the answer was sent are not judged.
func WaitAfterRetryAfter() Rule {
	return Rule{expect: "no request to an origin before the Retry-After it was given has passed", judge: func(reqs []Request) []Offence {
		var out []Offence
		for _, pause := range reqs {
			until, ok := retryAfterEnd(pause)
			if !ok {
				continue
			}
			for _, r := range reqs {
				if r.Origin != pause.Origin || !r.At.After(pause.Done) {
					continue
				}
				slack := RetryAfterTolerance
				if r.RemoteAddr == pause.RemoteAddr {
					slack = 0
				}
				if r.At.Sub(pause.Done) > slack && r.At.Before(until.Add(-RetryAfterTolerance)) {
					out = append(out, Offence{r, fmt.Sprintf("arrived %s after %s %s was answered %d with Retry-After %q at %s; the site asked for %s",
						r.At.Sub(pause.Done).Round(time.Millisecond), pause.Method, pause.Target, pause.Status,
						pause.Answer.Get("Retry-After"), pause.Done.Format("15:04:05.000"), until.Sub(pause.Done).Round(time.Millisecond))})
				}
			}
		}
		return sortByArrival(out)
	}}
}

// retryAfterEnd returns when the pause that r's answer asked for ends, if it asked for one.
func retryAfterEnd(r Request) (time.Time, bool) {
	if r.Done.IsZero() || !(r.Status/100 == 3 || r.Status == http.StatusTooManyRequests || r.Status == http.StatusServiceUnavailable) {
		return time.Time{}, false
	}
	v := strings.TrimSpace(r.Answer.Get("Retry-After"))
	if v == "" {
		return time.Time{}, false
	}
	if secs, err := strconv.ParseUint(v, 10, 32); err == nil {
		return r.Done.Add(time.Duration(secs) * time.Second), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return t, true
	}
	return time.Time{}, false
}

// byHostPort splits reqs by host:port, each group in order of arrival.
func byHostPort(reqs []Request) [][]Request {
	index := map[string]int{}
	var groups [][]Request
	for _, r := range reqs {
		k := r.HostPort()
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], r)
	}
	for _, g := range groups {
		slices.SortStableFunc(g, func(a, b Request) int { return a.At.Compare(b.At) })
	}
	return groups
}

func sortByArrival(out []Offence) []Offence {
	slices.SortStableFunc(out, func(a, b Offence) int { return a.Request.At.Compare(b.Request.At) })
	return out
}
