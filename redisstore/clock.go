// The shared host clock: hostclock.Clock with its schedule in Redis, so that every process of
// the crawler draws on one budget per origin.

package redisstore

import (
	"cmp"
	"github.com/politecrawl/etiquette/internal/idle"
	"github.com/politecrawl/etiquette/internal/waitline"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// Lifetimes of the clock's keys besides the leases.
const (
	// stateTTL is how long an origin's schedule, 429 penalty and response time outlive its last
	// start: a day without a request to it starts it afresh.
	stateTTL = 24 * time.Hour
	// floorLife is how long a Crawl-delay floor lasts unless its source sets it again: a
	// robots.txt is kept at most 24 h (RFC 9309 §2.4), and the robots gate sets the floor again
	// whenever a request passes it.
	floorLife = 25 * time.Hour
	// floorRewrite is how often a process writes a floor it already wrote, to keep it alive.
	floorRewrite = time.Hour
	// maxConcurrencyWait bounds a wait for a freed place, in case the message that one was freed
	// was lost (pub/sub delivers at most once, and not across a reconnection).
	maxConcurrencyWait = time.Second
)

// Clock is the [hostclock.Clock] of a [Store]: the rules of hostclock.Local — the GCRA schedule
// with its window counted from when requests reached the server, the concurrency cap, robots.txt
// first, Crawl-delay floors, the response-time interval, pauses, the 429 penalty and its
// recovery, the error budget — decided in Redis by one Lua script per step, so that they hold
// for every process together: no one-second window of the server's log holds more than the rate
// however many processes send.
//
// Get it with [Store.Clock] (the zero value is not usable) and pass it as politeness.Policy.Clock
// to every door of the process, and as the frontier's Pacer. Most callers never call its methods.
//
// Waiting: a request waits in this process's line for its origin (robots.txt first, then first
// come first served); only the first in line asks Redis, which answers with the moment to ask
// again — the schedule's next start, a pause's end, a lease's expiry — so nothing polls in a
// loop. While the line flows (the first's latest answer was a grant) the second in line asks
// beside it, once, so that an origin whose rules let requests through as fast as they come is
// not held to one round trip per grant; each ask is one atomic script, so the rules hold, but
// the second may then be granted before the first, which asks again. A wait for a place freed by
// another process ends on a message on the origin's freed channel (pub/sub), or after at most a
// second if the message is lost. A place freed in this process wakes the line directly.
//
// Places are leases that expire Options.LeaseExpiry after this process last renewed them: it
// renews them while the request is in flight, for at most Options.Clock.LeaseTTL (a body never
// closed), so a process that dies frees its places within the expiry. Pauses, give-ups and the
// penalty are in Redis: a 429 seen by one process pauses them all. Stats counts what every
// process of the crawl did (counters in Redis), with the origin's shared rate, floor, response
// time and pause.
//
// This process keeps a line per origin it was asked about; one unused for Options.Clock.ForgetAfter
// (a minute by default, negative: never) with no request of this process waiting or in flight
// is forgotten, as hostclock.Local forgets an idle origin. The origin's rules stay in Redis, so
// forgetting a line changes no start; the origin leaves this process's Stats until used again.
//
// Redis unreachable: Acquire grants nothing; it retries for up to Options.Wait and then returns
// an *UnavailableError. Earliest and PausedUntil wait the same way. Done retries too, and when
// it cannot report an outcome the lease expires on its own.
type Clock struct {
	s    *Store
	cfg  hostclock.Config
	log  *slog.Logger
	wake *wakeups

	mu    sync.Mutex
	lines map[string]*line
	// lru holds the lines in order of last use (clock_forget.go).
	lru idle.List[line]
	// now reads the time lines are used and forgotten by; time.Now but in this package's tests.
	now func() time.Time

	nextID atomic.Uint64

	// testHookWait, set only by this package's tests before first use, is called whenever the
	// first request in line was told to wait, before it waits.
	testHookWait func(key string, k kind.Kind, reason string)
}

var _ hostclock.Clock = (*Clock)(nil)

// Clock returns the store's host clock; every call returns the same one.
func (s *Store) Clock() *Clock {
	s.clockOnce.Do(func() {
		s.clock = &Clock{s: s, cfg: s.opts.Clock, log: cmp.Or(s.opts.Clock.Logger, s.log), lines: map[string]*line{}, lru: idle.New(func(ln *line) *idle.Links[line] { return &ln.idle }),
			now: time.Now}
		s.clock.wake = newWakeups(s.client, s.clock.freed, s.log)
		s.beat.add(s.clock.renew)
	})
	return s.clock
}

// line is this process's view of one origin. Its fields are guarded by Clock.mu.
type line struct {
	keys    originKeys
	gaveKey string
	stats   string // the crawl's counters of the origin
	rate    float64
	waiting []*waiter // robots.txt first, then in order of arrival
	headWhy string    // what the head of the line waits for
	// flowing is true while the head's latest answer was a grant: the origin's rules let
	// requests through as fast as they ask, so the second in line may ask too (see Acquire).
	flowing bool
	leases  map[*lease]struct{}
	floors  map[string]floorWrite // what this process last wrote, by source
	gaveUp  *hostclock.GiveUpError
	st      hostclock.OriginStats
	// gen is the generation of the origin's state in Redis this process relies on (see
	// generation.go), learnt at genAt; "" until the first answer.
	gen   string
	genAt time.Time
	// idle is the line's place in the clock's list of lines by last use (clock_forget.go).
	idle      idle.Links[line]
	forgotten bool // removed from Clock.lines: a caller still holding it changes nothing that lasts
}

type floorWrite struct {
	interval time.Duration
	at       time.Time
}

type waiter struct {
	wake   chan struct{} // buffered: a notification is never lost and never blocks
	robots bool
}

// line returns key's line, creating it, and marks it used; lines unused for Config.ForgetAfter
// that hold no request of this process are forgotten on the way (see sweep). It requires c.mu
// held.
func (c *Clock) line(key string) *line {
	ln, ok := c.lines[key]
	if !ok {
		ck := c.s.crawlKeysOf(key)
		ln = &line{keys: keysOf(key), gaveKey: ck.gaveUp, stats: ck.stats, rate: c.cfg.RateFor(key),
			leases: map[*lease]struct{}{}}
		ln.st.Origin = key
		c.lines[key] = ln
	}
	now := c.now()
	c.touch(ln, now)
	c.sweep(now)
	return ln
}

func (ln *line) enqueue(w *waiter) {
	ln.waiting = waitline.Join(ln.waiting, w, func(o *waiter) bool { return o.robots })
}

// leave removes w from the line and wakes the new head. It requires c.mu held.
func (ln *line) leave(w *waiter) {
	if i := slices.Index(ln.waiting, w); i >= 0 {
		ln.waiting = slices.Delete(ln.waiting, i, i+1)
		if i == 0 {
			ln.notifyHead()
		}
	}
}

func (ln *line) notifyHead() {
	if len(ln.waiting) > 0 {
		notify(ln.waiting[0])
	}
}

func notify(w *waiter) {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// freed wakes the head of key's line: a place was freed, in this process or another.
func (c *Clock) freed(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ln, ok := c.lines[key]; ok {
		ln.notifyHead()
	}
}
