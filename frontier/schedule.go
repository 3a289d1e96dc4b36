package frontier

// This file decides which origin a worker gets next: one whose queue has URLs, that has fewer
// than Concurrency in progress, no dispatch still waiting for its turn, and whose Pacer (or
// interval hint) says it may start now.

import (
	"container/heap"
	"errors"
	"fmt"
	"github.com/politecrawl/etiquette/internal/idle"
	"slices"
	"time"

	"github.com/politecrawl/etiquette/politeness/hostclock"
)

// originState is the frontier's view of one origin. Every field is guarded by Frontier.mu.
type originState struct {
	key        string
	queued     int       // entries waiting in the storage, as far as this frontier knows
	inProgress int       // items handed out and not acknowledged
	pending    *ticket   // the latest dispatch, until it is granted or acknowledged
	asking     bool      // a worker is asking the Pacer about it, without f.mu
	notBefore  time.Time // not dispatched before this moment
	gaveUp     error     // the *hostclock.GiveUpError that gave the origin up
	draining   bool      // in Frontier.draining
	index      int       // position in Frontier.ready; -1 when not in it
	seq        uint64    // when it last entered Frontier.ready
	held       int       // open Sources holding the origin
	admit      int       // URLs that may still go while it is held
	sources    []*Source // open Sources of the origin

	idle idle.Links[originState] // its place in Frontier.lru, for forgetting (see forget.go)

	done, duplicates, dropped, refused, drained int64
}

// origin returns key's state, creating it (with the counters it had when it was forgotten), marks
// it used and forgets a few idle origins. It requires f.mu held.
func (f *Frontier) origin(key string) *originState {
	o, ok := f.origins[key]
	if !ok {
		o = &originState{key: key, index: -1}
		if t, ok := f.retired[key]; ok {
			o.done, o.duplicates, o.dropped, o.refused, o.drained = t.done, t.duplicates, t.dropped, t.refused, t.drained
			delete(f.retired, key)
		}
		f.origins[key] = o
	}
	now := f.tm.Now()
	f.lru.Touch(o, now)
	f.sweep(now)
	return o
}

// eligible reports whether o may be dispatched once its notBefore has passed.
func (f *Frontier) eligible(o *originState) bool {
	return o.queued > 0 && o.gaveUp == nil && o.pending == nil && !o.asking && o.inProgress < f.concurrency &&
		(o.held == 0 || o.admit > 0)
}

// fix puts o where its state says it belongs: in the ready heap, in the drain list, or in
// neither. It requires f.mu held.
func (f *Frontier) fix(o *originState) {
	switch in := o.index >= 0; {
	case f.eligible(o) && !in:
		// Entering now: behind every origin that was already ready, so ready origins take turns.
		o.notBefore = later(o.notBefore, f.tm.Now())
		f.seq++
		o.seq = f.seq
		heap.Push(&f.ready, o)
	case f.eligible(o) && in:
		heap.Fix(&f.ready, o.index)
	case in:
		heap.Remove(&f.ready, o.index)
	}
	if o.gaveUp != nil && o.queued > 0 && !o.draining {
		o.draining = true
		f.draining = append(f.draining, o)
	}
}

// grant ends t's dispatch: its origin may be dispatched again when the pacer allows, or, without
// a pacer, one interval hint from now. It requires f.mu held.
func (f *Frontier) grant(t *ticket) {
	t.granted = true
	o := t.o
	if o.pending == t {
		o.pending = nil
	}
	if f.pacer == nil {
		o.notBefore = later(o.notBefore, f.tm.Now().Add(f.interval))
	}
	f.fix(o)
}

// giveUp marks o given up: its waiting entries are handed out refused. It requires f.mu held.
func (f *Frontier) giveUp(o *originState, cause *hostclock.GiveUpError) {
	if o.gaveUp != nil {
		return
	}
	o.gaveUp = cause
	f.log.Warn("frontier: origin given up; its remaining URLs are reported refused", "origin", o.key,
		"queued", o.queued, "reason", cause.Reason)
	f.fix(o)
}

// dispatch hands out the next item if one may go now. Otherwise it returns how long until the
// soonest origin may go (0 when none is waiting on time alone). It requires f.mu held, and
// releases it while it asks the Pacer or the storage (see ask and take), so what it read before
// may have changed when it returns.
func (f *Frontier) dispatch() (it Item, ok bool, wait time.Duration, err error) {
	for len(f.draining) > 0 {
		o := f.draining[0]
		if it, ok, err = f.take(o); err != nil || ok {
			if ok {
				it.Refused = fmt.Errorf("frontier: %s not fetched: %w", it.URL, o.gaveUp)
			}
			return it, ok, 0, err
		}
		// take found o's queue empty and took it off the drain list.
	}
	for f.ready.Len() > 0 {
		now := f.tm.Now()
		o := f.ready[0]
		if o.notBefore.After(now) {
			return Item{}, false, o.notBefore.Sub(now), nil
		}
		if f.pacer != nil {
			t, err := f.ask(o)
			var gu *hostclock.GiveUpError
			switch {
			case errors.As(err, &gu):
				f.giveUp(o, gu)
				return f.dispatch()
			case err != nil:
				return Item{}, false, 0, fmt.Errorf("frontier: the pacer cannot say when %s may start: %w", o.key, err)
			case f.closed:
				return Item{}, false, 0, nil
			case !f.eligible(o):
				continue // dispatched, given up or emptied by another worker meanwhile
			case t.After(f.tm.Now()):
				o.notBefore = t
				f.fix(o)
				continue
			}
		}
		if it, ok, err = f.take(o); err != nil || ok {
			return it, ok, 0, err
		}
	}
	return Item{}, false, 0, nil
}

// ask returns the Pacer's earliest start for o. It requires f.mu held and releases it during
// the call: over a shared store the answer is a round trip that may be retried for many seconds,
// and Push, Ack and the other workers must not wait for it. Meanwhile o is out of the ready heap
// (asking), so no other worker asks for it too; the caller re-checks o afterwards.
func (f *Frontier) ask(o *originState) (time.Time, error) {
	o.asking = true
	f.fix(o)
	f.mu.Unlock()
	t, err := f.pacer.Earliest(o.key)
	f.mu.Lock()
	o.asking = false
	f.fix(o)
	return t, err
}

// take takes o's oldest entry from the storage and records the dispatch. When the storage has
// none (another process took them), o is marked empty. It requires f.mu held and releases it
// while the storage answers: the dispatch is reserved first (o is pending and counted in
// progress, so no other worker dispatches it and the crawl is not declared over), and undone if
// the storage has nothing or fails.
func (f *Frontier) take(o *originState) (Item, bool, error) {
	t := &ticket{o: o}
	admitted := o.held > 0 && o.admit > 0
	if admitted {
		o.admit--
	}
	o.queued = max(0, o.queued-1)
	f.queued = max(0, f.queued-1)
	o.inProgress++
	f.taken++
	if o.gaveUp == nil {
		o.pending = t
	}
	f.fix(o)
	f.mu.Unlock()
	e, ok, err := f.store.GetRequest(o.key)
	f.mu.Lock()
	if err != nil || !ok {
		if o.pending == t {
			o.pending = nil
		}
		o.inProgress--
		f.taken--
		if admitted {
			o.admit++
		}
		if err != nil {
			o.queued++
			f.queued++
		} else {
			f.queued -= o.queued
			o.queued = 0
			if i := slices.Index(f.draining, o); i >= 0 {
				o.draining = false
				f.draining = slices.Delete(f.draining, i, i+1)
			}
		}
		f.fix(o)
		f.signal() // the reservation held other workers back from o
		if err != nil {
			return Item{}, false, fmt.Errorf("frontier: taking a URL of %s: %w", o.key, err)
		}
		return Item{}, false, nil
	}
	f.checkLow(o)
	return Item{Entry: e, Key: o.key, t: t}, true, nil
}

// SharedRecheck is how often a frontier over a [SharedStorage] looks again for URLs while it has
// none and another process still holds some.
const SharedRecheck = time.Second

// exhausted reports whether nothing is queued, nothing is in progress and no Source is open. Before saying so it
// asks the storage, which may hold entries this frontier did not queue (another process, an
// earlier run), and a shared storage whether another process still holds some; then recheck is
// how soon to look again. It requires f.mu held and releases it while the storage answers, so
// that Push and Ack do not wait for a shared store's round trips; the answers are applied
// afterwards to the frontier's state as it is then.
//
// With a shared storage it asks the storage also while a Source is open: the Source may stand
// for a discovery another process runs (discovery/plan's Claims), whose URLs reach the storage
// without passing this frontier; recheck then says how soon to look again.
func (f *Frontier) exhausted() (done bool, recheck time.Duration, err error) {
	shared, isShared := f.store.(SharedStorage)
	if f.busy(isShared) {
		return false, 0, nil
	}
	askTaken := isShared && f.sources == 0
	f.mu.Unlock()
	sizes, taken, err := f.scan(shared, askTaken)
	f.mu.Lock()
	if err != nil {
		return false, 0, err
	}
	for k, n := range sizes {
		// Raise, never lower: a Push or a dispatch since the scan makes the count here the newer
		// one, and an entry counted that another process took is found missing by take.
		if o := f.origin(k); n > o.queued {
			f.queued += n - o.queued
			o.queued = n
			f.fix(o)
		}
	}
	switch {
	case f.busy(isShared) || f.queued > 0:
		return false, 0, nil
	case f.sources > 0:
		return false, SharedRecheck, nil
	case taken > 0:
		return false, SharedRecheck, nil
	}
	return true, 0, nil
}

// busy reports whether the frontier's own counts show the crawl going on. It requires f.mu held.
func (f *Frontier) busy(isShared bool) bool {
	return f.taken > 0 || f.queued > 0 || len(f.draining) > 0 || (f.sources > 0 && !isShared)
}

// scan asks the storage for the sizes of its non-empty queues and, when askTaken, a shared
// storage for the entries other processes hold. It is called without f.mu.
func (f *Frontier) scan(shared SharedStorage, askTaken bool) (map[string]int, int, error) {
	keys, err := f.store.Origins()
	if err != nil {
		return nil, 0, fmt.Errorf("frontier: listing the storage's origins: %w", err)
	}
	sizes := make(map[string]int, len(keys))
	for _, k := range keys {
		n, err := f.store.QueueSize(k)
		if err != nil {
			return nil, 0, fmt.Errorf("frontier: reading the queue size of %s: %w", k, err)
		}
		if n > 0 {
			sizes[k] = n
		}
	}
	if !askTaken || len(sizes) > 0 {
		return sizes, 0, nil
	}
	n, err := shared.Taken()
	if err != nil {
		return nil, 0, fmt.Errorf("frontier: asking the storage what other processes hold: %w", err)
	}
	return sizes, n, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// readyHeap orders origins by the moment they may go, then by when they became ready.
type readyHeap []*originState

func (h readyHeap) Len() int { return len(h) }
func (h readyHeap) Less(i, j int) bool {
	if !h[i].notBefore.Equal(h[j].notBefore) {
		return h[i].notBefore.Before(h[j].notBefore)
	}
	return h[i].seq < h[j].seq
}
func (h readyHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *readyHeap) Push(x any) {
	o := x.(*originState)
	o.index = len(*h)
	*h = append(*h, o)
}
func (h *readyHeap) Pop() any {
	old := *h
	o := old[len(old)-1]
	old[len(old)-1] = nil
	o.index = -1
	*h = old[:len(old)-1]
	return o
}
