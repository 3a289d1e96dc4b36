package main

// This file decides what a crawl prints: one JSON line per URL it decided about on stdout, and
// the summary on stderr.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/kind"
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
}

// crawlOutput writes crawl's JSON lines and keeps what the summary needs.
type crawlOutput struct {
	mu        sync.Mutex
	enc       *json.Encoder
	stderr    io.Writer
	responses map[string]events.Event // URL → its last Response event, until its line is written
	lines     int
	pagesSeen int // lines of pages that got a response
	refusals  map[string]int
}

func newCrawlOutput(e env) *crawlOutput {
	return &crawlOutput{enc: json.NewEncoder(e.stdout), stderr: e.stderr, responses: map[string]events.Event{}, refusals: map[string]int{}}
}

func (o *crawlOutput) write(l line) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lines++
	if l.Refused != "" {
		o.refusals[l.Refused]++
	}
	_ = o.enc.Encode(l)
}

// event receives the door's stream: responses to requests the door made itself (robots.txt)
// become lines of their own; the others leave their cache outcome for the page's line.
func (o *crawlOutput) event(ev events.Event) {
	if ev.Type == events.Refused && ev.Kind == kind.Robots {
		// robots.txt itself could not be fetched (network error, timeout, too many redirects).
		o.write(line{URL: ev.URL, Kind: string(ev.Kind), FoundVia: "door", Refused: "error", Reason: ev.Detail})
		return
	}
	if ev.Type != events.Response {
		return
	}
	if ev.Kind == kind.Robots {
		o.write(line{URL: ev.URL, Status: ev.Status, Kind: string(ev.Kind), FoundVia: "door", Cache: ev.Cache, Bytes: ev.Bytes})
		return
	}
	o.mu.Lock()
	o.responses[ev.URL] = ev
	o.mu.Unlock()
}

// pages counts the pages that got a response (of any status).
func (o *crawlOutput) pages() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.pagesSeen
}

func (o *crawlOutput) page(u, final string, status int, via string, n int64) {
	o.mu.Lock()
	o.pagesSeen++
	ev, ok := o.responses[final]
	delete(o.responses, final) // read once: the map holds only responses not yet written
	o.mu.Unlock()
	k := string(kind.HTML)
	if ok {
		k = string(ev.Kind)
	}
	l := line{URL: u, Status: status, Kind: k, FoundVia: via, Cache: ev.Cache, Bytes: n}
	if final != u {
		l.FinalURL = final
	}
	o.write(l)
}

// refused writes the line of a URL the door refused: "robots" for a rule of the site's
// robots.txt, "budget" for an origin given up, "error" for the rest — robots.txt unreachable
// among them — with the library's reason.
func (o *crawlOutput) refused(u, via string, err error) {
	err = withoutRequest(err)
	l := line{URL: u, Kind: string(kind.HTML), FoundVia: via, Refused: "error", Reason: err.Error()}
	var gone *hostclock.GiveUpError
	switch _, byRule := blockedByRule(err); {
	case byRule:
		l.Refused = "robots"
	case errors.As(err, &gone):
		l.Refused = "budget"
	case errors.Is(err, politeness.ErrStopped):
		l.Reason = "interrupted before it was sent"
	}
	o.write(l)
}

func (o *crawlOutput) summary(s politeness.StatsSnapshot, interrupted bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if interrupted {
		fmt.Fprintln(o.stderr, "etiquette: interrupted; stopped admitting requests")
	}
	fmt.Fprintf(o.stderr, "etiquette: %d URLs decided, %d responses, %d bytes\n", o.lines, s.Responses, s.Bytes)
	fmt.Fprintf(o.stderr, "  refused: %s\n", counts(o.refusals))
	fmt.Fprintf(o.stderr, "  cache:   %s; %d body bytes the site did not send\n", counts(s.Cache), s.CacheBytesSaved)
	fmt.Fprintf(o.stderr, "  waits:   %s; pauses %d; retries %d\n", counts(s.Waits), s.Pauses, s.Retries)
	fmt.Fprintf(o.stderr, "  cookies refused: %s\n", counts(s.CookiesRefused))
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
