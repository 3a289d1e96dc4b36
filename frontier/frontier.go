// Package frontier is the crawl's URL frontier: it keeps the URLs still to fetch, one queue per
// origin, forgets none and repeats none, and hands a worker the next URL whose origin may start
// now — so no worker sits waiting on one origin's turn while another origin is ready.
//
// The model is Scrapy's downloader slots and Heritrix's per-host queues. Each origin (a budget key
// as origin.BudgetKey returns it: host and port, default ports folded) has a queue, a number of
// URLs in progress (at most Options.Concurrency) and a moment before which it is not dispatched.
// That moment comes from a [Pacer] — the host clock the door enforces — or, without one, from an
// interval hint. After an origin is dispatched it is not dispatched again until that request has
// passed the door's clock ([Frontier.Granted]) or finished ([Frontier.Ack]), so two workers never
// race for one slot. A [Source] (a discovery planner) may hold an origin back while it reads
// what the site publishes for machines, and keeps the crawl going while it has more to bring.
//
// Most callers use crawler.Run, which drives a Frontier. Driving one directly: [Frontier.Push] the
// start URLs, then in each worker loop [Frontier.Next], fetch, [Frontier.Granted] when the request
// is on its way, push the links found, and [Frontier.Ack]. Next returns [ErrExhausted] when
// nothing is queued and nothing is in progress: the crawl is over.
//
// The frontier asks its Pacer and its Storage without holding its lock, so a shared store's round
// trips hold up no Push, Ack or other worker.
//
// The frontier holds no goroutine of its own and no goroutine per URL; a waiting Next wakes on a
// timer for the soonest origin, or when a Push, Granted, Ack or Close changes what may go.
package frontier

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/politecrawl/etiquette/internal/idle"
	"github.com/politecrawl/etiquette/internal/quietlog"
	"iter"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/politecrawl/etiquette/politeness/hostclock"
)

// Defaults of [Options].
const (
	// DefaultConcurrency is the number of URLs of one origin in progress at once: the door's
	// default in-flight cap per origin.
	DefaultConcurrency = hostclock.DefaultConcurrency
	// DefaultMaxQueued is the number of URLs one origin's queue holds; more are dropped and
	// counted. One page can bring 384,444 links; the crawl can fetch about 260,000 pages a day
	// from an origin at 3 per second.
	DefaultMaxQueued = 100_000
	// DefaultRate is the start rate per origin the interval hint assumes without a Pacer.
	DefaultRate = hostclock.DefaultRate
)

// ErrExhausted is returned by [Frontier.Next] when no URL is queued and none is in progress: the
// crawl has nothing left to do.
var ErrExhausted = errors.New("frontier: no URL is queued and none is in progress")

// ErrClosed is returned by [Frontier.Next] after [Frontier.Close].
var ErrClosed = errors.New("frontier: closed; no URL is handed out any more")

// Pacer says when a request to an origin could start: the earliest moment its schedule, its
// Crawl-delay floor and any pause allow, ignoring how many requests are in flight (the frontier
// counts those itself). It returns a *[hostclock.GiveUpError] for an origin given up for the
// crawl. The door's host clock implements it; the frontier only follows it, the clock enforces.
type Pacer interface {
	Earliest(key string) (time.Time, error)
}

// Options configures a [Frontier]. The zero value is an in-memory frontier without a Pacer.
type Options struct {
	// Storage keeps the URLs; nil means [NewMemory].
	Storage Storage
	// Pacer says when each origin may start; nil means the interval hint below. Give it the
	// clock of the door the requests go through.
	Pacer Pacer
	// Rate is the start rate per origin, per second, from which the interval hint is derived when
	// there is no Pacer: the host clock's default spacing for Rate (hostclock.Config.Interval),
	// as the door's clock spaces starts. 0 means DefaultRate. It is a
	// hint only: the door's clock enforces the real schedule, and a request dispatched early waits
	// there, holding its worker.
	Rate float64
	// Concurrency is the number of URLs of one origin in progress at once; 0 means
	// DefaultConcurrency.
	Concurrency int
	// MaxQueued is the number of URLs one origin's queue holds; 0 means DefaultMaxQueued.
	MaxQueued int
	// ForgetAfter is how long an origin goes unused before the frontier may forget it, once
	// nothing of it is queued, in progress or held by a Source and the interval hint would let it
	// go at once; it then keeps only the origin's counters (for Stats) and, in the storage, the
	// record of its URLs seen. 0 means DefaultForgetAfter; a negative value keeps every origin.
	ForgetAfter time.Duration
	// Time is the clock read and waited on; nil means hostclock.SystemTime(). Tests inject a manual one.
	Time hostclock.Time
	// Logger receives the first drop of each origin and each give-up (Warn); nil means warnings and errors only, on slog.Default().
	Logger *slog.Logger
}

// Item is a URL handed out by [Frontier.Next].
type Item struct {
	Entry
	// Key is the budget key of the URL's origin.
	Key string
	// Refused is non-nil when the URL must not be fetched: its origin was given up (the error
	// wraps the *hostclock.GiveUpError). Report the URL as refused and Ack it.
	Refused error

	t *ticket
}

// ticket is the frontier's record of one handed-out item; its fields are guarded by Frontier.mu.
type ticket struct {
	o       *originState
	granted bool
	acked   bool
}

// Frontier is the crawl's queue of URLs and its dispatcher. Create it with [New]; the zero value
// is not usable. It is safe for concurrent use.
type Frontier struct {
	store       Storage
	pacer       Pacer
	interval    time.Duration // the hint without a pacer
	concurrency int
	maxQueued   int
	tm          hostclock.Time
	log         *slog.Logger

	forgetAfter time.Duration

	mu       sync.Mutex
	origins  map[string]*originState
	retired  map[string]tally       // the counters of forgotten origins
	lru      idle.List[originState] // the origins by last use, for forgetting (see forget.go)
	ready    readyHeap              // origins that may be dispatched once their notBefore has passed
	draining []*originState         // given-up origins with entries still to hand out as refused
	queued   int                    // entries waiting, as far as this frontier knows
	taken    int                    // items handed out and not acknowledged
	sources  int                    // open Sources: the crawl is not over while one is
	closed   bool
	changed  chan struct{} // closed and replaced whenever what may go changes
	seq      uint64        // orders origins with equal notBefore: first come, first served
	onWait   func()        // tests: called when a Next goes to sleep, its timer set
}

// New returns a frontier over opts.Storage, calling its Init.
func New(opts Options) (*Frontier, error) {
	if opts.Rate < 0 || opts.Concurrency < 0 || opts.MaxQueued < 0 {
		return nil, fmt.Errorf("frontier: Options.Rate %g, Concurrency %d and MaxQueued %d must not be negative; use 0 for the defaults",
			opts.Rate, opts.Concurrency, opts.MaxQueued)
	}
	f := &Frontier{
		store:       opts.Storage,
		pacer:       opts.Pacer,
		interval:    hostclock.Config{}.Interval(cmp.Or(opts.Rate, DefaultRate)),
		concurrency: cmp.Or(opts.Concurrency, DefaultConcurrency),
		maxQueued:   cmp.Or(opts.MaxQueued, DefaultMaxQueued),
		tm:          opts.Time,
		log:         opts.Logger,
		forgetAfter: cmp.Or(opts.ForgetAfter, DefaultForgetAfter),
		origins:     map[string]*originState{},
		lru:         idle.New(func(o *originState) *idle.Links[originState] { return &o.idle }),
		retired:     map[string]tally{},
		changed:     make(chan struct{}),
	}
	if f.store == nil {
		f.store = NewMemory()
	}
	if f.tm == nil {
		f.tm = hostclock.SystemTime()
	}
	f.log = quietlog.Or(f.log)
	if err := f.store.Init(); err != nil {
		return nil, fmt.Errorf("frontier: the storage could not start: %w", err)
	}
	return f, nil
}

// Push offers e to the frontier. The URL is normalised first: scheme and host lower-cased, the
// host IDNA-encoded, the default port and the fragment removed, an empty path written "/"; the
// entry is then queued unless that URL was queued before (Duplicate) or its origin's queue is
// full (Dropped, counted per origin). The error wraps [ErrBadURL] or [ErrURLTooLong] for a URL
// the frontier cannot keep, or the storage's error. Push may be called at any time, also while
// other goroutines wait in Next; a waiting Next wakes for the new URL.
func (f *Frontier) Push(e Entry) (Admission, error) {
	u, key, err := normalize(e.URL)
	if err != nil {
		return 0, err
	}
	e.URL = u
	a, err := f.store.AddRequest(key, e, f.maxQueued)
	if err != nil {
		return 0, fmt.Errorf("frontier: queueing %s: %w", u, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.origin(key)
	switch a {
	case Queued:
		o.queued++
		f.queued++
		f.fix(o)
		f.signal()
	case Duplicate:
		o.duplicates++
	case Dropped:
		if o.dropped == 0 {
			f.log.Warn("frontier: an origin's queue is full; further URLs of it are dropped and counted",
				"origin", key, "limit", f.maxQueued, "url", u)
		}
		o.dropped++
	}
	return a, nil
}

// Next waits for a URL whose origin may start now and hands it out; the caller must Ack it.
// It returns [ErrExhausted] when nothing is queued, nothing is in progress and no [Source] is
// open, [ErrClosed] after
// Close, ctx's error when ctx ends first, and the Pacer's or the storage's error when either
// fails (a shared clock that cannot be reached: the crawl must stop rather than guess).
//
// An item with Refused set belongs to a given-up origin: report it, do not fetch it, Ack it.
func (f *Frontier) Next(ctx context.Context) (Item, error) {
	f.mu.Lock()
	rescanned := false
	for {
		if f.closed {
			f.mu.Unlock()
			return Item{}, ErrClosed
		}
		// Taken before dispatch and exhausted, which let go of f.mu while they ask the Pacer or
		// the storage: a change made meanwhile has closed it, and this Next looks again at once.
		changed := f.changed
		it, ok, wait, err := f.dispatch()
		if err != nil || ok {
			f.mu.Unlock()
			return it, err
		}
		done, recheck, err := f.exhausted()
		if err != nil || done {
			f.mu.Unlock()
			if err == nil {
				err = ErrExhausted
			}
			return Item{}, err
		}
		if f.ready.Len() > 0 && wait == 0 && !rescanned {
			// The storage held entries this frontier did not know of: dispatch them now.
			rescanned = true
			continue
		}
		if recheck > 0 && (wait == 0 || recheck < wait) {
			wait = recheck
		}
		if f.closed {
			continue
		}
		onWait := f.onWait
		f.mu.Unlock()

		var fire <-chan time.Time
		var timer hostclock.Timer
		if wait > 0 {
			timer = f.tm.NewTimer(wait)
			fire = timer.C()
		}
		if onWait != nil {
			onWait()
		}
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return Item{}, ctx.Err()
		case <-changed:
		case <-fire:
		}
		if timer != nil {
			timer.Stop()
		}
		f.mu.Lock()
	}
}

// Granted tells the frontier that the item's request has passed the door's clock (it is on the
// wire, or was answered from the cache): the origin may be dispatched again as soon as the Pacer
// (or the interval hint) allows. Calling it is optional — Ack implies it — but without it an
// origin has at most one URL dispatched and waiting for its turn at a time. Calls after the first,
// or after Ack, do nothing.
func (f *Frontier) Granted(it Item) {
	if it.t == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if it.t.granted || it.t.acked {
		return
	}
	f.grant(it.t)
	f.signal()
}

// Ack says that an item is finished: fetched, refused or reported. fetchErr is the fetch's error,
// if any: a *hostclock.GiveUpError among it gives the origin up, and its remaining URLs are then
// handed out with Refused set. Acking an item twice does nothing. The error is the storage's.
func (f *Frontier) Ack(it Item, fetchErr error) error {
	if it.t == nil {
		return nil
	}
	f.mu.Lock()
	t := it.t
	if t.acked {
		f.mu.Unlock()
		return nil
	}
	if !t.granted {
		f.grant(t)
	}
	t.acked = true
	o := t.o
	f.lru.Touch(o, f.tm.Now())
	o.inProgress--
	f.taken--
	if it.Refused != nil {
		o.refused++
	} else {
		o.done++
	}
	var gu *hostclock.GiveUpError
	if errors.As(fetchErr, &gu) {
		f.giveUp(o, gu)
	}
	f.fix(o)
	f.signal()
	f.mu.Unlock()
	if err := f.store.Ack(it.Key, it.Entry); err != nil {
		return fmt.Errorf("frontier: acknowledging %s: %w", it.URL, err)
	}
	return nil
}

// Close stops the frontier handing out URLs: every Next, waiting or to come, returns ErrClosed.
// Push still queues (links of pages still being read), and Drain hands out what is left (over a
// SharedStorage it leaves it queued for the crawl's other processes).
func (f *Frontier) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.signal()
}

// Drain removes every queued URL and yields it, so that a crawl that stops early can report what
// it did not fetch. It is meant for after Close. A storage error ends the sequence early; it is
// logged.
//
// Over a SharedStorage Drain removes and yields nothing: the URLs belong to the crawl as a whole,
// and the crawl's other processes fetch them; a process that stops early leaves them queued.
func (f *Frontier) Drain() iter.Seq[Entry] {
	return func(yield func(Entry) bool) {
		if _, shared := f.store.(SharedStorage); shared {
			return
		}
		keys, err := f.store.Origins()
		if err != nil {
			f.log.Warn("frontier: could not list the queues to drain", "err", err)
			return
		}
		slices.Sort(keys)
		for _, key := range keys {
			for {
				e, ok, err := f.store.GetRequest(key)
				if err != nil {
					f.log.Warn("frontier: could not drain a queue", "origin", key, "err", err)
					return
				}
				if !ok {
					break
				}
				if err := f.store.Ack(key, e); err != nil {
					f.log.Warn("frontier: could not acknowledge a drained URL", "origin", key, "url", e.URL, "err", err)
				}
				f.mu.Lock()
				o := f.origin(key)
				o.queued = max(0, o.queued-1)
				f.queued = max(0, f.queued-1)
				o.drained++
				f.fix(o)
				f.checkLow(o)
				f.mu.Unlock()
				if !yield(e) {
					return
				}
			}
		}
	}
}

// OriginStats counts what the frontier did with one origin's URLs.
type OriginStats struct {
	Origin     string // budget key
	Queued     int    // waiting now
	InProgress int    // handed out and not acknowledged
	Done       int64  // acknowledged after a fetch (whatever its outcome)
	Duplicates int64  // offered again after they were queued
	Dropped    int64  // offered while the queue was full; not kept
	Refused    int64  // handed out refused because the origin was given up
	Drained    int64  // removed unfetched by Drain
	GaveUp     string // why the origin was given up; "" when it was not
}

// Stats returns every origin's counters, sorted by origin: those the frontier forgot too.
func (f *Frontier) Stats() []OriginStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]OriginStats, 0, len(f.origins)+len(f.retired))
	for key, t := range f.retired {
		out = append(out, OriginStats{Origin: key, Done: t.done, Duplicates: t.duplicates, Dropped: t.dropped,
			Refused: t.refused, Drained: t.drained})
	}
	for _, o := range f.origins {
		s := OriginStats{Origin: o.key, Queued: o.queued, InProgress: o.inProgress, Done: o.done,
			Duplicates: o.duplicates, Dropped: o.dropped, Refused: o.refused, Drained: o.drained}
		if o.gaveUp != nil {
			s.GaveUp = o.gaveUp.Error()
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b OriginStats) int { return cmp.Compare(a.Origin, b.Origin) })
	return out
}

// signal wakes every waiting Next to look again. It requires f.mu held.
func (f *Frontier) signal() {
	close(f.changed)
	f.changed = make(chan struct{})
}
