// This file decides what the report says about each origin: the figures, and the inputs they
// are computed from besides the events.

package report

import (
	"cmp"
	"maps"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// Options says what budget each origin is measured against. The zero value measures every
// origin against politeness.DefaultRate, as a door with the default Policy enforces it.
type Options struct {
	// Rate is the starts per second allowed per origin, as politeness.Policy.Rate; 0 means
	// politeness.DefaultRate.
	Rate float64
	// AuthorizedRates are higher rates for some budget keys (host[:port]), as
	// politeness.Policy.AuthorizedRates.
	AuthorizedRates map[string]float64

	// Labels name origins (budget keys) after what they are ("blog"): the report shows such an
	// origin as "blog (127.0.0.1:8080)". An origin without a label shows its key alone.
	Labels map[string]string
	// About, when not empty, opens the HTML page: sentences that say what was crawled (the demo
	// says what each origin of its site shows). The text report does not print it.
	About string
	// StartRates are the rates origins' clocks already ran at when the crawl began, where an
	// earlier crawl through the same clock lowered them after a 429 (hostclock.Local.Stats'
	// Rate). An origin not listed starts at its budget.
	StartRates map[string]float64
}

// name is how the report shows the origin key.
func (o Options) name(key string) string {
	if l := o.Labels[key]; l != "" {
		return l + " (" + key + ")"
	}
	return key
}

func (o Options) budget(key string) float64 {
	if r, ok := o.AuthorizedRates[key]; ok && r > 0 {
		return r
	}
	if o.Rate > 0 {
		return o.Rate
	}
	return politeness.DefaultRate
}

// Found counts the URLs a crawl found at each origin by how it found them: the found_via of the
// crawl's output (start, link, sitemap, feed, llms, api, …). The events do not say how a URL was
// found, so the crawl tells the report with Add. The zero value is empty and ready to use; a nil
// *Found counts nothing. Safe for concurrent use.
type Found struct {
	mu     sync.Mutex
	n      map[string]map[string]int // budget key → found_via → URLs
	limits map[string]map[string]int // budget key → limit → URLs or documents it held back
}

// Add counts one URL found via via. A URL whose origin cannot be told is counted under the
// origin "(no origin)", so that no URL goes uncounted.
func (f *Found) Add(rawURL, via string) {
	if f == nil {
		return
	}
	f.add(&f.n, rawURL, via, 1)
}

// Limit counts n URLs or documents of the origin of rawURL that the crawl's limit held back
// (max-pages, and discovery's bounds: off-origin, private-network, max-documents, …).
func (f *Found) Limit(rawURL, limit string, n int) {
	if f == nil {
		return
	}
	f.add(&f.limits, rawURL, limit, n)
}

func (f *Found) add(m *map[string]map[string]int, rawURL, name string, n int) {
	key := noOrigin
	if u, err := url.Parse(rawURL); err == nil {
		if k, err := origin.BudgetKey(u); err == nil {
			key = k
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if *m == nil {
		*m = map[string]map[string]int{}
	}
	if (*m)[key] == nil {
		(*m)[key] = map[string]int{}
	}
	(*m)[key][name] += n
}

// byOrigin returns a copy of the counts of one origin.
func (f *Found) byOrigin(key string) map[string]int {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.n[key])
}

// limitsOf returns a copy of the limit counts of one origin.
func (f *Found) limitsOf(key string) map[string]int {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.limits[key])
}

func (f *Found) origins() []string {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	keys := slices.Collect(maps.Keys(f.n))
	for k := range f.limits {
		if f.n[k] == nil {
			keys = append(keys, k)
		}
	}
	return keys
}

// noOrigin is the origin under which events and URLs without one are counted.
const noOrigin = "(no origin)"

// Report is what a crawl did to each origin it touched, computed from its event stream. Make one
// with [Summarize] or a [Recorder]; print it with [Report.WriteText], or write a report
// directory with [Create].
type Report struct {
	Start, End time.Time // the first and the last event
	Events     int       // events read
	Origins    []Origin  // sorted by Name
	About      string    // Options.About
}

// Origin holds the figures of one origin (budget key). Maps are nil when they would be empty.
type Origin struct {
	Origin string  // the budget key, host[:port]
	Name   string  // how the report shows it: "blog (127.0.0.1:8080)" with a label ([Options]), else Origin
	Budget float64 // the starts per second allowed ([Options])
	// Lowered lists the changes of the rate the door allowed below Budget: each 429 halves it
	// (hostclock.PenaltyFactor, down to an eighth), and each run of hostclock.DefaultRecoverAfter
	// successes after it raises it by hostclock.RecoverStep, back up to Budget. The report
	// replays that rule of the local host clock from the events; nil when the rate never fell.
	Lowered []RateChange

	// Requests counts the requests the site received: every request the door sent, robots.txt
	// and retries included. Answers from the cache alone (fresh, stale) are not requests; nor is
	// a request that failed without an answer and was not retried (its trace in the events is a
	// Paused or Refused event only).
	Requests int
	// FirstStart and LastStart are the first and last of those requests' starts: when the host
	// clock granted the slot (a Waited event), or else when the request passed the robots gate
	// (Admitted) or was re-sent (Retried), the closest to the start the events record.
	FirstStart, LastStart time.Time
	// StartsPerSecond is the starts after the first over the span from FirstStart to LastStart:
	// what the origin saw while the crawl was busy there; an even schedule at the budget gives the
	// budget. 0 with fewer than two requests.
	StartsPerSecond float64
	// BusiestSecond is the most starts in any one-second window [t, t+1s), the count an operator
	// makes from the server's log. Like the start times above, it covers the first MaxTimeline
	// marks of the origin.
	BusiestSecond int

	// Statuses counts the answers of the site by status. A revalidation counts as the 304 the
	// site sent, not as the 200 the cache made of it with its stored copy.
	// A body cut at its kind's size cap is not counted here but in Cut: its status promised a
	// whole answer the crawl did not read.
	Statuses map[int]int
	// Cut counts the answers whose body was cut at its kind's size cap (Policy.MaxBodyBytes;
	// the response event's Truncated): the site sent more than the crawl reads.
	Cut     int
	Retries int // requests re-sent after a 429, a 503 or a transient error
	Waits   map[string]Wait
	Robots  Robots
	// RetryAfter sums the pauses the site asked for with Retry-After (Paused events with reason
	// retry-after); Backoff those the door chose itself after a 429, 503 or failure without one.
	RetryAfter, Backoff Pauses
	Cache               map[string]int // answers by cache outcome: miss, fresh, revalidated, stale
	BytesReceived       int64          // body bytes the site sent (answers that were not from the cache)
	BytesNotSent        int64          // body bytes served from the cache: fresh, stale and revalidated answers
	CookiesRefused      map[string]int // cookies not kept, by category (analytics, consent, session, …)
	Found               map[string]int // URLs found, by found_via ([Found])
	Refused             map[string]int // requests not sent, by reason: robots, budget, deadline, error, stopped
	Limits              map[string]int // URLs and discovery documents the crawl's limits held back, by limit ([Found.Limit])
	Notices             map[string]int // other notices (latency, cache-corrupt, …) by reason; a cut body is counted in Cut

	timeline timeline
}

// RateChange is a change of the rate the door allowed an origin.
type RateChange struct {
	At     time.Time
	Rate   float64 // starts per second from At on
	Reason string  // "after a 429", "recovering after 10 successes", "after an earlier crawl's 429"
}

// Wait sums the waits of one reason.
type Wait struct {
	Count int
	Total time.Duration
}

// Pauses sums an origin's pauses of one kind.
type Pauses struct {
	Count int
	Total time.Duration // the pauses' lengths, from when each began to its end
	// Honoured counts the pauses during which no request started at the origin (within
	// [PauseTolerance] of either end).
	Honoured int
}

// PauseTolerance is the slack at each end of a pause within which a start does not count
// against it: the door stamps the pause and the start on different goroutines.
const PauseTolerance = 50 * time.Millisecond

// Robots holds an origin's robots.txt decisions.
type Robots struct {
	Status  int // the status of the last robots.txt answer; 0 when robots.txt got none
	Allowed int // requests that passed the robots gate
	Blocked int // requests robots.txt refused
	// Rules lists what refused them, most refusals first: a line of robots.txt ("line 9
	// \"Disallow: /drafts/\"") or the state of the file ("robots.txt answered 503").
	Rules []RuleCount
}

// RuleCount is one deciding rule and the requests it refused.
type RuleCount struct {
	Rule    string
	Blocked int
	Example string // the first URL it refused
}

// maxRules bounds the deciding rules kept per origin; further rules are counted under otherRules.
const (
	maxRules   = 50
	otherRules = "other rules"
)

// finish computes the figures that need every start, and sorts what is listed.
func (o *Origin) finish() {
	starts := slices.Clone(o.timeline.starts)
	slices.SortFunc(starts, func(a, b mark) int { return a.at.Compare(b.at) })
	if len(starts) > 0 {
		o.FirstStart, o.LastStart = starts[0].at, starts[len(starts)-1].at
	}
	if span := o.LastStart.Sub(o.FirstStart); len(starts) > 1 && span > 0 {
		o.StartsPerSecond = float64(len(starts)-1) / span.Seconds()
	}
	first := 0
	for last := range starts {
		for starts[last].at.Sub(starts[first].at) >= time.Second {
			first++
		}
		o.BusiestSecond = max(o.BusiestSecond, last-first+1)
	}
	for _, p := range o.timeline.pauses {
		honoured := !slices.ContainsFunc(starts, func(s mark) bool {
			return s.at.After(p.from.Add(PauseTolerance)) && s.at.Before(p.to.Add(-PauseTolerance))
		})
		switch {
		case p.reason == reasonRetryAfter && honoured:
			o.RetryAfter.Honoured++
		case honoured:
			o.Backoff.Honoured++
		}
	}
	slices.SortStableFunc(o.Robots.Rules, func(a, b RuleCount) int { return cmp.Compare(b.Blocked, a.Blocked) })
}
