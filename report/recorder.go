// This file decides how the event stream becomes figures: which events are requests to the site,
// when each started, and what every other event adds to its origin's counts.

package report

import (
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// The event reasons and cache outcomes the figures tell apart. They are the door's: the host
// clock's pause reasons, the cookies layer's and the body cap's notices, the cache's outcomes.
const (
	reasonRetryAfter = "retry-after"
	reasonRobots     = "robots"
	cookieRefused    = "cookie-refused"
	noticeTruncated  = "truncated"
	cacheFresh       = "fresh"
	cacheStale       = "stale"
	cacheMiss        = "miss"
	cacheRevalidated = "revalidated"
)

// MaxTimeline bounds what a [Recorder] keeps per origin to draw its timeline and compute its
// busiest second: the first MaxTimeline request starts, waits and pauses (about 40 bytes each).
// Later ones are counted in the figures but not drawn, and the report says so.
const MaxTimeline = 100_000

// Recorder turns an event stream into a [Report] as it arrives: subscribe Record to the door's
// bus for the crawl, then call Report. Most callers want [Create], which also writes the events
// to a file, or [Summarize] for events already in memory. Memory grows with the origins and,
// per origin, up to MaxTimeline marks; events need not arrive in time order. Safe for
// concurrent use; the zero value is not usable.
type Recorder struct {
	mu      sync.Mutex
	opts    Options
	start   time.Time
	end     time.Time
	events  int
	origins map[string]*originRecord
}

// originRecord is an origin's figures while the stream is read, and its requests in progress.
type originRecord struct {
	fig     Origin
	pending map[string]pending // by URL: requests admitted or re-sent, not yet answered
	pace    pace
}

// pending is what the stream told so far of a request that has not been answered: when it
// passed the robots gate or was re-sent (from), and when the host clock granted it a slot after
// a wait (granted).
type pending struct {
	from, granted time.Time
}

// start is the best record of when the request began at the site: the grant when it waited,
// else when it reached the clock, else when its answer arrived (robots.txt, which the gate does
// not admit, when it did not wait).
func (p pending) start(answered time.Time) time.Time {
	switch {
	case !p.granted.IsZero():
		return p.granted
	case !p.from.IsZero():
		return p.from
	}
	return answered
}

// NewRecorder returns a recorder that measures origins against the budget o describes.
func NewRecorder(o Options) *Recorder {
	return &Recorder{opts: o, origins: map[string]*originRecord{}}
}

// Summarize is the report of evs: shorthand for a Recorder that records each of them.
func Summarize(evs []events.Event, found *Found, o Options) *Report {
	r := NewRecorder(o)
	for _, e := range evs {
		r.Record(e)
	}
	return r.Report(found)
}

// Record adds one event to the figures.
func (r *Recorder) Record(e events.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events++
	if r.start.IsZero() || e.Time.Before(r.start) {
		r.start = e.Time
	}
	if e.Time.After(r.end) {
		r.end = e.Time
	}
	key := originOf(e)
	o := r.origins[key]
	if o == nil {
		o = &originRecord{fig: Origin{Origin: key, Budget: r.opts.budget(key)}, pending: map[string]pending{}}
		o.pace.start(&o.fig, e.Time, r.opts.StartRates[key])
		r.origins[key] = o
	}
	o.record(e)
}

func (o *originRecord) record(e events.Event) {
	f := &o.fig
	switch e.Type {
	case events.Admitted:
		f.Robots.Allowed++
		o.pending[e.URL] = pending{from: e.Time}
	case events.Waited:
		f.Waits = addWait(f.Waits, e.Reason, e.Wait)
		p := o.pending[e.URL]
		p.granted = e.Time
		o.pending[e.URL] = p
		f.timeline.addWait(span{from: e.Time.Add(-e.Wait), to: e.Time, reason: e.Reason})
	case events.Retried:
		f.Retries++
		f.Requests++
		f.Statuses = inc(f.Statuses, e.Status)
		o.pace.learn(f, e)
		f.timeline.addStart(mark{at: o.pending[e.URL].start(e.Time), outcome: outcomeRetried})
		o.pending[e.URL] = pending{from: e.Time}
	case events.Response:
		o.response(e)
	case events.Refused:
		delete(o.pending, e.URL)
		f.Refused = inc(f.Refused, e.Reason)
		if e.Reason == reasonRobots {
			f.Robots.Blocked++
			f.Robots.Rules = countRule(f.Robots.Rules, decidingRule(e.Detail), e.URL)
		}
	case events.Paused:
		until := e.Until
		if until.IsZero() {
			until = e.Time.Add(e.Wait)
		}
		p := Pauses{Count: 1, Total: max(until.Sub(e.Time), 0)}
		if e.Reason == reasonRetryAfter {
			f.RetryAfter.Count, f.RetryAfter.Total = f.RetryAfter.Count+p.Count, f.RetryAfter.Total+p.Total
		} else {
			f.Backoff.Count, f.Backoff.Total = f.Backoff.Count+p.Count, f.Backoff.Total+p.Total
		}
		f.timeline.addPause(span{from: e.Time, to: until, reason: e.Reason})
	case events.Notice:
		switch e.Reason {
		case cookieRefused:
			category, _, _ := strings.Cut(e.Detail, ":")
			f.CookiesRefused = inc(f.CookiesRefused, strings.TrimSpace(category))
		case noticeTruncated:
			// Counted once, as its response (Cut), on the statuses line.
		default:
			f.Notices = inc(f.Notices, e.Reason)
		}
	}
}

// response counts an answer that reached the top of the door: from the site (a request), or
// from the cache alone.
func (o *originRecord) response(e events.Event) {
	f := &o.fig
	p := o.pending[e.URL]
	delete(o.pending, e.URL)
	if e.Cache != "" {
		f.Cache = inc(f.Cache, e.Cache)
	}
	if e.Kind == kind.Robots {
		f.Robots.Status = e.Status
	}
	switch e.Cache {
	case cacheFresh, cacheStale:
		f.BytesNotSent += e.Bytes
		f.timeline.addHit(e.Time)
		return
	case "", cacheMiss:
		f.BytesReceived += e.Bytes
	default: // revalidated: the site answered 304 and the stored body was served
		f.BytesNotSent += e.Bytes
	}
	f.Requests++
	status := e.Status
	if e.Cache == cacheRevalidated {
		status = 304 // what the site answered; e.Status is the stored copy's
	}
	if e.Truncated {
		f.Cut++ // not the whole answer its status promised
	} else {
		f.Statuses = inc(f.Statuses, status)
	}
	o.pace.learn(f, e)
	outcome := e.Cache
	switch {
	case e.Status == 429 || e.Status >= 500:
		outcome = outcomeFailed // answered 429 or 5xx and not re-sent: no full answer
	case outcome == "":
		outcome = outcomeUncached
	}
	f.timeline.addStart(mark{at: p.start(e.Time), outcome: outcome})
}

// Report returns the figures so far, with the URLs found counted by found (nil: none).
func (r *Recorder) Report(found *Found) *Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := &Report{Start: r.start, End: r.end, Events: r.events, About: r.opts.About}
	keys := slices.Collect(maps.Keys(r.origins))
	for _, k := range found.origins() {
		if r.origins[k] == nil {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		f := Origin{Origin: k, Budget: r.opts.budget(k)}
		if o := r.origins[k]; o != nil {
			f = o.fig
			f.timeline = f.timeline.clone()
			f.Robots.Rules, f.Lowered = slices.Clone(f.Robots.Rules), slices.Clone(f.Lowered)
			for _, m := range []*map[string]int{&f.Cache, &f.CookiesRefused, &f.Refused, &f.Notices} {
				*m = maps.Clone(*m)
			}
			f.Statuses, f.Waits = maps.Clone(f.Statuses), maps.Clone(f.Waits)
		}
		f.Found, f.Limits, f.Name = found.byOrigin(k), found.limitsOf(k), r.opts.name(k)
		f.finish()
		rep.Origins = append(rep.Origins, f)
	}
	// By how the report names them: a demo's labels (archive, blog, docs, shop), else host:port.
	slices.SortStableFunc(rep.Origins, func(a, b Origin) int { return strings.Compare(a.Name, b.Name) })
	return rep
}

// originOf is the event's budget key, from its Origin or else its URL (the cookie notices carry
// only a URL, or an origin in place of one).
func originOf(e events.Event) string {
	if e.Origin != "" {
		return e.Origin
	}
	if u, err := url.Parse(e.URL); err == nil && u.Host != "" {
		if k, err := origin.BudgetKey(u); err == nil {
			return k
		}
	}
	return noOrigin
}

// inc adds one to m[k], making m when it is nil.
func inc[K comparable](m map[K]int, k K) map[K]int {
	if m == nil {
		m = map[K]int{}
	}
	m[k]++
	return m
}

// addWait adds a wait of d to m[reason], making m when it is nil.
func addWait(m map[string]Wait, reason string, d time.Duration) map[string]Wait {
	if m == nil {
		m = map[string]Wait{}
	}
	w := m[reason]
	m[reason] = Wait{Count: w.Count + 1, Total: w.Total + d}
	return m
}

func countRule(rules []RuleCount, rule, example string) []RuleCount {
	if i := slices.IndexFunc(rules, func(r RuleCount) bool { return r.Rule == rule }); i >= 0 {
		rules[i].Blocked++
		return rules
	}
	if len(rules) >= maxRules-1 {
		rule = otherRules
		if i := slices.IndexFunc(rules, func(r RuleCount) bool { return r.Rule == otherRules }); i >= 0 {
			rules[i].Blocked++
			return rules
		}
	}
	return append(rules, RuleCount{Rule: rule, Blocked: 1, Example: example})
}

// decidingRule takes the deciding rule out of a robots refusal's Detail, the text of a
// robots.DisallowedError: "robots.txt disallows URL for TOKEN: REASON; this crawler must not
// fetch it", where REASON begins with the rule — `line 9 "Disallow: /drafts/" disallows: …` —
// or with the state of the file — "robots.txt answered 503: treating the origin as disallowed
// until …". It keeps `line 9 "Disallow: /drafts/"` or "robots.txt answered 503", so refusals by
// one rule count together. (Neither a URL as sent nor a product token holds a space, so " for "
// and ": " find the reason.) A Detail of another form is kept whole.
func decidingRule(detail string) string {
	_, rest, ok := strings.Cut(detail, " for ")
	if !ok {
		return detail
	}
	if _, rest, ok = strings.Cut(rest, ": "); !ok {
		return detail
	}
	reason, _, _ := strings.Cut(rest, "; this crawler must not fetch it")
	if after, ok := strings.CutPrefix(reason, "line "); ok {
		num, quoted, _ := strings.Cut(after, " ")
		if rule, err := strconv.QuotedPrefix(quoted); err == nil {
			return "line " + num + " " + rule
		}
	}
	state, _, _ := strings.Cut(reason, ": ")
	return state
}
