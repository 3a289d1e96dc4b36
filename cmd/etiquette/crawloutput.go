package main

// This file decides what a crawl prints: one JSON line per URL it decided about on stdout, and
// the summary on stderr.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/politecrawl/etiquette/crawler"
	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/robots"
	"github.com/politecrawl/etiquette/report"
)

// line is one JSON object of crawl's output: a URL the crawl decided about.
type line struct {
	URL      string `json:"url"`
	FinalURL string `json:"final_url,omitempty"`
	Status   int    `json:"status,omitempty"`
	Kind     string `json:"kind"`
	FoundVia string `json:"found_via"`
	Cache    string `json:"cache,omitempty"`
	Bytes    int64  `json:"bytes"`
	Refused  string `json:"refused,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Limit and Count make a limit's line: one per origin and limit, with url the origin,
	// refused "limit", and the number of URLs or documents it held back.
	Limit string `json:"limit,omitempty"`
	Count int    `json:"count,omitempty"`
}

// crawlOutput writes crawl's JSON lines and keeps what the summary needs.
type crawlOutput struct {
	mu        sync.Mutex
	enc       *json.Encoder
	stderr    io.Writer
	maxQueue  int
	responses map[string]events.Event // URL → its Response event, until its page's line is written
	lines     int
	refusals  map[string]int
	limits    map[limitKey]*limitCount // what each limit held back, per origin, until the summary
	found     *report.Found            // counts each line's URL by its found_via for the report; nil: no report

	// noFDs counts requests (robots.txt fetches and pages) that failed for want of a file
	// descriptor. The pages a robots.txt failure refuses are that robots.txt's count.
	noFDs int
}

// limitKey is one limit on one origin.
type limitKey struct{ origin, limit string }

// limitCount is what one limit held back on one origin: its line, without the count yet.
type limitCount struct {
	line  line
	count int
}

func newCrawlOutput(e env, maxQueue int, found *report.Found) *crawlOutput {
	return &crawlOutput{enc: json.NewEncoder(e.stdout), stderr: e.stderr, maxQueue: maxQueue,
		responses: map[string]events.Event{}, refusals: map[string]int{}, limits: map[limitKey]*limitCount{}, found: found}
}

func (o *crawlOutput) write(l line) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lines++
	if l.Refused != "" {
		o.refusals[l.Refused]++
	}
	o.found.Add(l.URL, l.FoundVia)
	// JSON escapes C0 controls but not C1 or bidi controls; a reason may quote a server.
	l.Reason = terminalSafe(l.Reason)
	_ = o.enc.Encode(l)
}

// event receives the door's stream: responses to requests the door made itself (robots.txt)
// become lines of their own; the others leave their cache outcome for the page's line. A
// redirect hop's response is not kept: the page's line is its final answer's, and a hop kept
// would never be read.
func (o *crawlOutput) event(ev events.Event) {
	if ev.Type == events.Refused && ev.Kind == kind.Robots {
		// robots.txt itself could not be fetched (network error, timeout, too many redirects).
		if outOfDescriptors(ev.Err) {
			o.mu.Lock()
			o.noFDs++
			o.mu.Unlock()
		}
		o.write(line{URL: ev.URL, Kind: string(ev.Kind), FoundVia: frontier.ViaRobots, Refused: "error", Reason: ev.Detail})
		return
	}
	if ev.Type != events.Response {
		return
	}
	if ev.Kind == kind.Robots {
		o.write(line{URL: ev.URL, Status: ev.Status, Kind: string(ev.Kind), FoundVia: frontier.ViaRobots, Cache: ev.Cache, Bytes: ev.Bytes})
		return
	}
	if ev.Status >= 300 && ev.Status < 400 && ev.Status != http.StatusNotModified {
		return
	}
	o.mu.Lock()
	o.responses[ev.URL] = ev
	o.mu.Unlock()
}

// result writes the line of one URL the crawler decided about: a page that got a response
// (with the reason its body was cut short, if it was), or one that got none and why.
func (o *crawlOutput) result(r crawler.Result) {
	l := line{URL: r.URL, Kind: string(r.Kind), FoundVia: r.FoundVia}
	if outOfDescriptors(r.Err) {
		o.mu.Lock()
		o.noFDs++
		o.mu.Unlock()
	}
	if r.Status == 0 && errors.Is(r.Err, crawler.ErrPageLimit) {
		// One line per origin when the crawl ends, not one per URL: a page of 100,000 links
		// would otherwise print 100,000 lines that say the same.
		o.limit(originOf(r.URL), string(r.Kind), "max-pages", pageLimitReason, 1)
		return
	}
	if r.Status == 0 {
		l.Refused, l.Reason = refusal(r.Err)
		o.write(l)
		return
	}
	o.mu.Lock()
	ev, ok := o.responses[r.FinalURL]
	delete(o.responses, r.FinalURL) // read once: the map holds only responses not yet written
	o.mu.Unlock()
	if ok {
		l.Kind, l.Cache, l.Reason = string(ev.Kind), ev.Cache, ev.Reason
	}
	l.Status, l.Bytes = r.Status, r.Bytes
	if r.FinalURL != r.URL {
		l.FinalURL = r.FinalURL
	}
	if r.Err != nil {
		l.Reason = withoutRequest(r.Err).Error()
	}
	o.write(l)
}

// descriptorFailures is the number of requests that failed for want of a file descriptor.
func (o *crawlOutput) descriptorFailures() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.noFDs
}

// refusal says why a URL got no response: "robots" for a rule of the site's robots.txt,
// "budget" for an origin given up, "limit" for a URL --max-pages left unfetched, "error" for the
// rest — robots.txt unreachable and interrupted requests among them — with the reason.
func refusal(err error) (refused, reason string) {
	err = withoutRequest(err)
	var gone *hostclock.GiveUpError
	switch {
	case errors.Is(err, robots.ErrDisallowed):
		// A rule of robots.txt, or a robots.txt that cannot be read: the door's robots gate
		// refused it, and the report counts it on the robots.txt line, so it has one name here too.
		return "robots", err.Error()
	case errors.As(err, &gone):
		return "budget", err.Error()
	case errors.Is(err, crawler.ErrPageLimit):
		return "limit", pageLimitReason
	case errors.Is(err, politeness.ErrStopped), errors.Is(err, crawler.ErrInterrupted):
		return "error", "interrupted before it was sent"
	}
	return "error", err.Error()
}

// summary prints what the crawl did on stderr: the lines and responses, the refusals, the cache,
// the waits, the cookies refused, and every URL the crawl knew of but did not queue or fetch.
func (o *crawlOutput) summary(s politeness.StatsSnapshot, c crawler.Summary, interrupted bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if interrupted {
		fmt.Fprintln(o.stderr, "etiquette: interrupted; stopped admitting requests")
	}
	for _, l := range c.Discovery.Limits {
		o.limitLocked(l.Origin, "discovery", l.Reason, discoveryLimitReason(l), l.Count)
	}
	limits := o.flushLimits()
	fmt.Fprintf(o.stderr, "etiquette: %d URLs decided, %d responses, %d bytes\n", o.lines, s.Responses, s.Bytes)
	if s.Truncated > 0 {
		// A cut body is not a whole answer, whatever its status: its line's reason says so too.
		fmt.Fprintf(o.stderr, "  cut at their size cap: %d responses (robots.txt past %d bytes, pages past their kind's cap)\n", s.Truncated, robots.MaxBytes)
	}
	fmt.Fprintf(o.stderr, "  refused: %s\n", counts(o.refusals))
	fmt.Fprintf(o.stderr, "  found via: %s; %d discovery documents\n", counts(c.Sources), c.Documents)
	fmt.Fprintf(o.stderr, "  cache:   %s; %d body bytes the site did not send\n", counts(s.Cache), s.CacheBytesSaved)
	fmt.Fprintf(o.stderr, "  waits:   %s; pauses %d; retries %d\n", counts(s.Waits), s.Pauses, s.Retries)
	if n := s.CookiesRefusedTotal(); n > 0 {
		fmt.Fprintf(o.stderr, "  cookies refused: %d (%s)\n", n, counts(s.CookiesRefused))
	} else {
		fmt.Fprintln(o.stderr, "  cookies refused: none")
	}
	for _, st := range c.Origins {
		if st.Dropped > 0 {
			fmt.Fprintf(o.stderr, "  dropped %d URLs over the queue cap of %s (--max-queue %d)\n", st.Dropped, st.Origin, o.maxQueue)
		}
	}
	if o.noFDs > 0 {
		fmt.Fprintf(o.stderr, "  out of file descriptors (EMFILE): %d requests failed on this machine, not at the site; lower --workers or raise ulimit -n\n", o.noFDs)
	}
	if c.LinksOverLimit > 0 {
		fmt.Fprintf(o.stderr, "  did not follow %d links beyond the first %d of their page (--max-queue)\n", c.LinksOverLimit, o.maxQueue)
	}
	for _, l := range limits {
		fmt.Fprintf(o.stderr, "  limit %s on %s: %d (%s)\n", l.Limit, l.URL, l.Count, l.Reason)
	}
}

func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
