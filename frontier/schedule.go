package frontier

// This file decides which origin a worker gets next: one whose queue has URLs, that has fewer
// than Concurrency in progress, no dispatch still waiting for its turn, and whose Pacer (or
// interval hint) says it may start now.

import (
	"container/heap"
	"errors"
	"fmt"
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
	notBefore  time.Time // not dispatched before this moment
	gaveUp     error     // the *hostclock.GiveUpError that gave the origin up
	draining   bool      // in Frontier.draining
	index      int       // position in Frontier.ready; -1 when not in it
	seq        uint64    // when it last entered Frontier.ready
	held       int       // open Sources holding the origin
	admit      int       // URLs that may still go while it is held
	sources    []*Source // open Sources of the origin

	done, duplicates, dropped, refused, drained int64
}

// origin returns key's state, creating it. It requires f.mu held.
func (f *Frontier) origin(key string) *originState {
	o, ok := f.origins[key]
	if !ok {
		o = &originState{key: key, index: -1}
		f.origins[key] = o
	}
	return o
}

// eligible reports whether o may be dispatched once its notBefore has passed.
func (f *Frontier) eligible(o *originState) bool {
	return o.queued > 0 && o.gaveUp == nil && o.pending == nil && o.inProgress < f.concurrency &&
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
// soonest origin may go (0 when none is waiting on time alone). It requires f.mu held.
func (f *Frontier) dispatch() (it Item, ok bool, wait time.Duration, err error) {
	for len(f.draining) > 0 {
		o := f.draining[0]
		if it, ok, err = f.take(o); err != nil || ok {
			if ok {
				it.Refused = fmt.Errorf("frontier: %s not fetched: %w", it.URL, o.gaveUp)
			}
			return it, ok, 0, err
		}
		o.draining = false
		f.draining = slices.Delete(f.draining, 0, 1)
	}
	now := f.tm.Now()
	for f.ready.Len() > 0 {
		o := f.ready[0]
		if o.notBefore.After(now) {
			return Item{}, false, o.notBefore.Sub(now), nil
		}
		if f.pacer != nil {
			t, err := f.pacer.Earliest(o.key)
			var gu *hostclock.GiveUpError
			switch {
			case errors.As(err, &gu):
				f.giveUp(o, gu)
				return f.dispatch()
			case err != nil:
				return Item{}, false, 0, fmt.Errorf("frontier: the pacer cannot say when %s may start: %w", o.key, err)
			case t.After(now):
				o.notBefore = t
				heap.Fix(&f.ready, o.index)
				continue
			}
		}
		if it, ok, err = f.take(o); err != nil || ok {
			return it, ok, 0, err
		}
	}
	return Item{}, false, 0, nil
}

// take takes o's oldest entry from the storage and records the dispatch. When the storage has
// none (another process took them), o is marked empty. It requires f.mu held.
func (f *Frontier) take(o *originState) (Item, bool, error) {
	e, ok, err := f.store.GetRequest(o.key)
	if err != nil {
		return Item{}, false, fmt.Errorf("frontier: taking a URL of %s: %w", o.key, err)
	}
	if !ok {
		f.queued -= o.queued
		o.queued = 0
		f.fix(o)
		return Item{}, false, nil
	}
	t := &ticket{o: o}
	o.queued = max(0, o.queued-1)
	f.queued = max(0, f.queued-1)
	if o.held > 0 && o.admit > 0 {
		o.admit--
	}
	o.inProgress++
	f.taken++
	if o.gaveUp == nil {
		o.pending = t
	}
	f.fix(o)
	f.checkLow(o)
	return Item{Entry: e, Key: o.key, t: t}, true, nil
}

// SharedRecheck is how often a frontier over a [SharedStorage] looks again for URLs while it has
// none and another process still holds some.
const SharedRecheck = time.Second

// exhausted reports whether nothing is queued, nothing is in progress and no Source is open. Before saying so it
// asks the storage, which may hold entries this frontier did not queue (another process, an
// earlier run), and a shared storage whether another process still holds some; then recheck is
// how soon to look again. It requires f.mu held.
//
// With a shared storage it asks the storage also while a Source is open: the Source may stand
// for a discovery another process runs (discovery/plan's Claims), whose URLs reach the storage
// without passing this frontier; recheck then says how soon to look again.
func (f *Frontier) exhausted() (done bool, recheck time.Duration, err error) {
	shared, isShared := f.store.(SharedStorage)
	if f.taken > 0 || f.queued > 0 || len(f.draining) > 0 || (f.sources > 0 && !isShared) {
		return false, 0, nil
	}
	keys, err := f.store.Origins()
	if err != nil {
		return false, 0, fmt.Errorf("frontier: listing the storage's origins: %w", err)
	}
	for _, k := range keys {
		n, err := f.store.QueueSize(k)
		if err != nil {
			return false, 0, fmt.Errorf("frontier: reading the queue size of %s: %w", k, err)
		}
		if n > 0 {
			o := f.origin(k)
			f.queued += n - o.queued
			o.queued = n
			f.fix(o)
		}
	}
	if f.queued > 0 {
		return false, 0, nil
	}
	if f.sources > 0 {
		return false, SharedRecheck, nil
	}
	if isShared {
		n, err := shared.Taken()
		if err != nil {
			return false, 0, fmt.Errorf("frontier: asking the storage what other processes hold: %w", err)
		}
		if n > 0 {
			return false, SharedRecheck, nil
		}
	}
	return true, 0, nil
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
