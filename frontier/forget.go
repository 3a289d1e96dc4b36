package frontier

// This file decides when the frontier forgets an origin: once nothing of it is queued, in
// progress or held, and the interval hint would let it go at once, it costs only its counters.

import (
	"time"

	"github.com/politecrawl/etiquette/politeness/hostclock"
)

// DefaultForgetAfter is Options.ForgetAfter when it is 0: the host clock's default.
const DefaultForgetAfter = hostclock.DefaultForgetAfter

// sweepBatch bounds the origins one call looks at for forgetting; see hostclock.
const sweepBatch = 4

// tally is what the frontier keeps of a forgotten origin: its counters, for Stats.
type tally struct {
	done, duplicates, dropped, refused, drained int64
}

// touch marks o used at now, moving it to the young end of the list of origins by last use. It
// requires f.mu held.
func (f *Frontier) touch(o *originState, now time.Time) {
	o.used = now
	if f.young == o {
		return
	}
	f.unlink(o)
	o.older = f.young
	if f.young != nil {
		f.young.younger = o
	}
	f.young = o
	if f.old == nil {
		f.old = o
	}
}

// unlink takes o out of the list of origins. It requires f.mu held.
func (f *Frontier) unlink(o *originState) {
	if o.younger != nil {
		o.younger.older = o.older
	} else if f.young == o {
		f.young = o.older
	}
	if o.older != nil {
		o.older.younger = o.younger
	} else if f.old == o {
		f.old = o.younger
	}
	o.older, o.younger = nil, nil
}

// sweep looks at up to sweepBatch of the least recently used origins and forgets those unused
// for Options.ForgetAfter that nothing holds, keeping their counters. It requires f.mu held.
func (f *Frontier) sweep(now time.Time) {
	if f.forgetAfter < 0 {
		return
	}
	for range sweepBatch {
		o := f.old
		if o == nil || now.Sub(o.used) < f.forgetAfter {
			return
		}
		if !f.forgettable(o, now) {
			f.touch(o, now)
			continue
		}
		f.unlink(o)
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
