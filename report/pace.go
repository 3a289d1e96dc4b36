// This file decides the rate an origin was allowed while the crawl ran: the budget, lowered by
// each 429 and raised again by runs of successes, as the local host clock does it.

package report

import (
	"fmt"
	"time"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
)

// minRateFactor is the host clock's floor for a rate lowered by 429s: an eighth of the budget.
// hostclock keeps it unexported; the report states the same rule.
const minRateFactor = 1.0 / 8

// earlierCrawl is the reason of a rate an earlier crawl left lowered; it holds from the start.
const earlierCrawl = "after an earlier crawl's 429"

// pace replays the host clock's rate rule for one origin from its events. The events carry the
// outcomes the clock learns from, not the rate itself, so the report follows the rule of
// hostclock.Local with its default RecoverAfter; a clock configured otherwise, or a shared one
// whose other processes saw 429s, may differ.
type pace struct {
	factor float64 // of the budget; 0 until the first event
	okRun  int     // successes since the rate last changed
}

// start sets the rate an earlier crawl left the origin at.
func (p *pace) start(f *Origin, at time.Time, rate float64) {
	p.factor = 1
	if rate > 0 && rate < f.Budget {
		p.factor = rate / f.Budget
		f.Lowered = append(f.Lowered, RateChange{At: at, Rate: rate, Reason: earlierCrawl})
	}
}

// learn applies the outcome of one answer of the site: a Response that was not from the cache
// alone, or a Retried (whose Status is the answer that was re-sent).
func (p *pace) learn(f *Origin, e events.Event) {
	switch {
	case e.Status == 429:
		if p.factor > minRateFactor {
			p.factor = max(minRateFactor, p.factor*hostclock.PenaltyFactor)
			f.Lowered = append(f.Lowered, RateChange{At: e.Time, Rate: f.Budget * p.factor, Reason: "after a 429"})
		}
		p.okRun = 0
	case e.Status >= 500 || e.Status == 0 || e.Err != nil:
		p.okRun = 0
	case p.factor < 1:
		p.okRun++
		if p.okRun >= hostclock.DefaultRecoverAfter {
			p.factor, p.okRun = min(1, p.factor*hostclock.RecoverStep), 0
			f.Lowered = append(f.Lowered, RateChange{At: e.Time, Rate: f.Budget * p.factor,
				Reason: fmt.Sprintf("recovering after %d successes", hostclock.DefaultRecoverAfter)})
		}
	}
}
