// This file decides what an origin's timeline keeps: request starts with their outcome, waits,
// pauses and answers from the cache, up to MaxTimeline of them.

package report

import (
	"slices"
	"time"
)

// The outcomes a request start is drawn with, besides the cache's miss and revalidated.
const (
	outcomeRetried  = "retried"  // answered 429, 503 or failed, and re-sent
	outcomeUncached = "uncached" // the cache did not take part
	outcomeFailed   = "failed"   // answered 429 or 5xx, and not re-sent
)

// mark is a moment of the timeline: a request start and its outcome, or an answer from the cache.
type mark struct {
	at      time.Time
	outcome string
}

// span is a stretch of the timeline: a wait or a pause, with its reason.
type span struct {
	from, to time.Time
	reason   string
}

// timeline is what an origin's plot draws. Its lists together hold at most MaxTimeline items;
// dropped counts the rest.
type timeline struct {
	starts  []mark
	hits    []time.Time
	waits   []span
	pauses  []span
	dropped int
}

func (t *timeline) full() bool {
	if len(t.starts)+len(t.hits)+len(t.waits)+len(t.pauses) < MaxTimeline {
		return false
	}
	t.dropped++
	return true
}

func (t *timeline) addStart(m mark) {
	if !t.full() {
		t.starts = append(t.starts, m)
	}
}

func (t *timeline) addHit(at time.Time) {
	if !t.full() {
		t.hits = append(t.hits, at)
	}
}

func (t *timeline) addWait(s span) {
	if !t.full() {
		t.waits = append(t.waits, s)
	}
}

func (t *timeline) addPause(s span) {
	if !t.full() {
		t.pauses = append(t.pauses, s)
	}
}

func (t timeline) clone() timeline {
	return timeline{starts: slices.Clone(t.starts), hits: slices.Clone(t.hits), waits: slices.Clone(t.waits),
		pauses: slices.Clone(t.pauses), dropped: t.dropped}
}

// last is the latest moment the timeline draws: a second after the last start (when the count
// of starts in the last second falls back), or the end of the last wait, pause or cache answer.
func (t timeline) last() time.Time {
	var end time.Time
	later := func(at time.Time) {
		if at.After(end) {
			end = at
		}
	}
	for _, s := range t.starts {
		later(s.at.Add(time.Second))
	}
	for _, at := range t.hits {
		later(at)
	}
	for _, s := range append(slices.Clone(t.waits), t.pauses...) {
		later(s.to)
	}
	return end
}
