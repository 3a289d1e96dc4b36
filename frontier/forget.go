package frontier

// This file decides when the frontier forgets an origin: once nothing of it is queued, in
// progress or held, and the interval hint would let it go at once, it costs only its counters.

import (
	"time"

	"github.com/politecrawl/etiquette/internal/idle"
	"github.com/politecrawl/etiquette/politeness/hostclock"
)

// DefaultForgetAfter is Options.ForgetAfter when it is 0: the host clock's default.
const DefaultForgetAfter = hostclock.DefaultForgetAfter

// tally is what the frontier keeps of a forgotten origin: its counters, for Stats.
type tally struct {
	done, duplicates, dropped, refused, drained int64
}

// sweep looks at up to idle.SweepBatch of the least recently used origins and forgets those
// unused for Options.ForgetAfter that nothing holds, keeping their counters. It requires f.mu
// held.
func (f *Frontier) sweep(now time.Time) {
	for range idle.SweepBatch {
		o := f.lru.Idle(now, f.forgetAfter)
		if o == nil {
			return
		}
		if !f.forgettable(o, now) {
			f.lru.Touch(o, now)
			continue
		}
		f.lru.Remove(o)
		delete(f.origins, o.key)
		if t := (tally{o.done, o.duplicates, o.dropped, o.refused, o.drained}); t != (tally{}) {
			f.retired[o.key] = t
		}
	}
}

// forgettable reports whether forgetting o changes nothing but where its counters are kept:
// nothing of it is queued, dispatched or in progress, no Source holds it, it was not given up
// (its URLs pushed later are still refused at once), and the interval hint would let it go now.
// It requires f.mu held.
func (f *Frontier) forgettable(o *originState, now time.Time) bool {
	return o.queued == 0 && o.inProgress == 0 && o.pending == nil && !o.asking && o.gaveUp == nil &&
		!o.draining && o.index < 0 && o.held == 0 && len(o.sources) == 0 && !o.notBefore.After(now)
}
