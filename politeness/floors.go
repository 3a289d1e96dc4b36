package politeness

import (
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/politecrawl/etiquette/politeness/hostclock"
)

// floorBook hands a clock the Crawl-delay floor of each budget key: the largest delay any source
// asked for. Several sources share one budget key — http://h and https://h have a robots.txt
// each, and two doors with different tokens (a crawl and a user-triggered fetch) read different
// groups — so the last one to be read must not simply win, and a delay a site drops from its
// robots.txt must stop counting.
type floorBook struct {
	mu      sync.Mutex
	sources map[string]map[string]time.Duration // budget key → source → delay
	set     map[string]time.Duration            // budget key → floor handed to the clock
}

// floorBooks keeps one book per clock, so that every door sharing a clock shares its book. A
// *hostclock.Local is keyed weakly and its book dropped when the clock is collected, so a program
// that builds a clock per job does not keep them all; other Clock implementations are kept.
var floorBooks sync.Map // hostclock.Clock or weak.Pointer[hostclock.Local] → *floorBook

func floorBookFor(c hostclock.Clock) *floorBook {
	var key any = c
	local, isLocal := c.(*hostclock.Local)
	if isLocal {
		key = weak.Make(local)
	}
	if b, ok := floorBooks.Load(key); ok {
		return b.(*floorBook)
	}
	b, loaded := floorBooks.LoadOrStore(key, &floorBook{sources: map[string]map[string]time.Duration{}, set: map[string]time.Duration{}})
	if !loaded && isLocal {
		runtime.AddCleanup(local, func(k any) { floorBooks.Delete(k) }, key)
	}
	return b.(*floorBook)
}

// record notes that source (a robots.txt origin and a token) asks budget for delay (0: none),
// and updates the clock's floor when the largest delay changed.
func (b *floorBook) record(c hostclock.Clock, budget, source string, delay time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.sources[budget]
	if delay > 0 {
		if m == nil {
			m = map[string]time.Duration{}
			b.sources[budget] = m
		}
		m[source] = delay
	} else if m != nil {
		delete(m, source)
	}
	var floor time.Duration
	for _, d := range m {
		floor = max(floor, d)
	}
	if floor != b.set[budget] {
		b.set[budget] = floor
		c.SetFloor(budget, floor)
	}
}
