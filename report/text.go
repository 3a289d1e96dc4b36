// This file decides how the figures read as plain text, for a terminal after a crawl; the HTML
// page shows the same lines.

package report

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// WriteText writes the report as plain text: a header line, then a block per origin with one
// line per figure.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	b.WriteString(r.headline() + "\n")
	for _, o := range r.Origins {
		fmt.Fprintf(&b, "\n%s\n", o.title())
		for _, f := range o.lines(r.Start) {
			fmt.Fprintf(&b, "  %-12s %s\n", f.name, f.value)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (r *Report) headline() string {
	if r.Events == 0 {
		return "etiquette report: no events"
	}
	return fmt.Sprintf("etiquette report: %d origins, %d events over %s (%s to %s)", len(r.Origins), r.Events,
		seconds(r.End.Sub(r.Start)), r.Start.Format("15:04:05"), r.End.Format("15:04:05"))
}

// figure is one line of an origin's block.
type figure struct{ name, value string }

// lines are the origin's figures; zero is the report's start, from which times are counted.
func (o Origin) lines(zero time.Time) []figure {
	out := []figure{{"requests", o.requestsLine()}}
	if len(o.Lowered) > 0 {
		out = append(out, figure{"budget", o.budgetLine(zero)})
	}
	if len(o.Statuses) > 0 || o.Cut > 0 {
		out = append(out, figure{"statuses", o.statusesLine()})
	}
	out = append(out, figure{"waits", o.waitsLine()}, figure{"robots.txt", o.robotsLine()})
	if o.RetryAfter.Count > 0 || o.Backoff.Count > 0 {
		out = append(out, figure{"pauses", o.pausesLine()})
	}
	out = append(out, figure{"cache", o.cacheLine()},
		figure{"cookies", "refused: " + counts(o.CookiesRefused, asIs)},
		figure{"found via", counts(o.Found, asIs)})
	// A refusal by robots.txt is counted once, on the robots.txt line, with its rule.
	if notSent := maps.Clone(o.Refused); len(notSent) > 0 {
		delete(notSent, reasonRobots)
		if len(notSent) > 0 {
			out = append(out, figure{"not sent", counts(notSent, asIs)})
		}
	}
	if len(o.Limits) > 0 {
		out = append(out, figure{"limits", counts(o.Limits, asIs)})
	}
	if len(o.Notices) > 0 {
		out = append(out, figure{"notices", counts(o.Notices, asIs)})
	}
	if o.timeline.dropped > 0 {
		out = append(out, figure{"timeline", fmt.Sprintf("%d further events counted but not kept for the timeline and the busiest second (report.MaxTimeline)", o.timeline.dropped)})
	}
	return out
}

func (o Origin) requestsLine() string {
	s := fmt.Sprintf("%d", o.Requests)
	if o.Retries > 0 {
		s += fmt.Sprintf(" (%d of them re-sent)", o.Retries)
	}
	if o.StartsPerSecond > 0 {
		s += fmt.Sprintf(" in %s: %.2f starts/s", seconds(o.LastStart.Sub(o.FirstStart)), o.StartsPerSecond)
	}
	verdict := "within"
	if float64(o.BusiestSecond) > o.Budget {
		verdict = "OVER"
	}
	return s + fmt.Sprintf("; busiest second %d, %s the budget of %g/s", o.BusiestSecond, verdict, o.Budget)
}

// title is the origin's heading: its Name, or its key for figures made without one.
func (o Origin) title() string { return cmp.Or(o.Name, o.Origin) }

// statusesLine lists the statuses; the 304s say that the cache served its copy for them, and the
// answers cut at their size cap come last, apart from the statuses they came with.
func (o Origin) statusesLine() string {
	var parts []string
	if len(o.Statuses) > 0 {
		s := counts(o.Statuses, func(s int) string { return fmt.Sprint(s) })
		if n := o.Statuses[304]; n > 0 {
			s = strings.Replace(s, fmt.Sprintf("304 %d", n), fmt.Sprintf("304 %d (revalidated: the cache's copy served)", n), 1)
		}
		parts = append(parts, s)
	}
	if o.Cut > 0 {
		parts = append(parts, fmt.Sprintf("cut %d (body past its cap)", o.Cut))
	}
	return strings.Join(parts, ", ")
}

// budgetLine says how the rate the door allowed changed: "3/s; 1.5/s from 2.1 s (after a 429), …".
func (o Origin) budgetLine(zero time.Time) string {
	s := fmt.Sprintf("%g/s", o.Budget)
	for _, c := range o.Lowered {
		s += fmt.Sprintf("; %.3g/s from %s (%s)", c.Rate, seconds(c.At.Sub(zero)), c.Reason)
	}
	return s
}

func (o Origin) waitsLine() string {
	if len(o.Waits) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(o.Waits)) {
		parts = append(parts, fmt.Sprintf("%s %d (%s)", k, o.Waits[k].Count, seconds(o.Waits[k].Total)))
	}
	return strings.Join(parts, ", ")
}

func (o Origin) robotsLine() string {
	var s string
	if o.Robots.Status != 0 {
		s = fmt.Sprintf("answered %d; ", o.Robots.Status)
	}
	s += fmt.Sprintf("allowed %d, blocked %d", o.Robots.Allowed, o.Robots.Blocked)
	var rules []string
	for _, r := range o.Robots.Rules {
		rules = append(rules, fmt.Sprintf("%s ×%d", r.Rule, r.Blocked))
	}
	if len(rules) > 0 {
		s += " by " + strings.Join(rules, ", ")
	}
	return s
}

func (o Origin) pausesLine() string {
	var parts []string
	for _, p := range []struct {
		name string
		p    Pauses
	}{{"Retry-After", o.RetryAfter}, {"backoff", o.Backoff}} {
		if p.p.Count > 0 {
			parts = append(parts, fmt.Sprintf("%s %d (%s), %d honoured", p.name, p.p.Count, seconds(p.p.Total), p.p.Honoured))
		}
	}
	return strings.Join(parts, "; ")
}

func (o Origin) cacheLine() string {
	return fmt.Sprintf("%s; %s the site did not send, %s it sent", counts(o.Cache, asIs), size(o.BytesNotSent), size(o.BytesReceived))
}

func asIs(s string) string { return s }

// counts lists m as "k1 n1, k2 n2" in key order, or "none".
func counts[K cmp.Ordered](m map[K]int, name func(K) string) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", name(k), m[k]))
	}
	return strings.Join(parts, ", ")
}

func seconds(d time.Duration) string {
	return fmt.Sprintf("%.1f s", d.Seconds())
}

func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
