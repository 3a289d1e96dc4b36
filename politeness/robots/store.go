package robots

// This file defines where a Keeper holds its per-origin entries, and the default: memory,
// bounded in the number of origins.

import (
	"context"
	"sync"
)

// Store holds a [Keeper]'s entries, one per origin, so that the keeper's lifecycle — when to
// fetch again, which copy is in force after a failed refresh — runs on whatever the store holds:
// the keeper's own memory by default ([MemoryStore]), or a store several processes share.
//
// The contract:
//   - Load returns the entry last saved for origin (scheme://host[:port], as in [Entry.Origin]),
//     or nil when there is none. The keeper calls it for every decision, so it must be cheap: a
//     store outside the process keeps a local copy of an entry until its Expires.
//   - A store may forget an entry at any time (a bound on its size, an expiry, a failure to reach
//     it): Load then returns nil, the keeper fetches robots.txt again, and if that fetch fails the
//     origin is disallowed, because no last good copy is known. Forgetting errs on the polite
//     side; it never allows more.
//   - Save makes e the entry of e.Origin for every later Load, in this process and in every other
//     one sharing the store. A store never returns an older entry after a newer one was saved.
//   - Entries are immutable: the keeper never changes one after saving or loading it, and the
//     store must not either. A store that keeps entries outside the process keeps their exported
//     fields and rebuilds File with [Parse](Body); only Err's text needs to survive, not its type.
//   - Both methods are safe for concurrent use. Within a process the keeper fetches an origin's
//     robots.txt once at a time; a store shared by processes that wants the same across them
//     implements [Locker] as well.
type Store interface {
	Load(origin string) *Entry
	Save(e *Entry)
}

// Locker is implemented by a [Store] shared between processes that wants one robots.txt fetch per
// origin across all of them.
type Locker interface {
	// Lock waits until the caller may fetch origin's robots.txt, or ctx ends, and returns the
	// function that releases the lock. Once it holds the lock the keeper loads the entry again,
	// so a process that waited uses the entry the holder saved instead of fetching. After an
	// error the keeper fetches without the lock: at worst one extra robots.txt request, never a
	// wrong decision.
	Lock(ctx context.Context, origin string) (unlock func(), err error)
}

// MemoryStore is the default [Store]: entries in this process's memory, at most a bounded number
// of origins, so a process-wide keeper on a broad crawl does not grow without end. Beyond the
// bound, entries that expired before the one being saved was fetched are dropped first, then any
// (down to 90 % of the bound, so that the next saves do not each pay for a sweep); the entry being
// saved always stays. The zero value holds up to [DefaultMaxOrigins].
type MemoryStore struct {
	max int

	mu      sync.Mutex
	entries map[string]*Entry
}

// NewMemoryStore returns a store of at most maxOrigins entries; 0 means [DefaultMaxOrigins].
func NewMemoryStore(maxOrigins int) *MemoryStore {
	return &MemoryStore{max: maxOrigins}
}

// Load implements [Store].
func (m *MemoryStore) Load(origin string) *Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.entries[origin]
}

// Save implements [Store].
func (m *MemoryStore) Save(e *Entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = make(map[string]*Entry)
	}
	m.entries[e.Origin] = e
	m.evict(e)
}

// evict keeps the number of origins within the bound, sparing keep. Requires m.mu held.
func (m *MemoryStore) evict(keep *Entry) {
	limit := m.max
	if limit <= 0 {
		limit = DefaultMaxOrigins
	}
	if len(m.entries) <= limit {
		return
	}
	now := keep.Fetched
	for key, e := range m.entries {
		if key != keep.Origin && !now.Before(e.Expires) {
			delete(m.entries, key)
		}
	}
	for key := range m.entries {
		if len(m.entries) <= limit*9/10 {
			break
		}
		if key != keep.Origin {
			delete(m.entries, key)
		}
	}
}
