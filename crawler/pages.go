package crawler

// This file decides when the crawl has fetched its MaxPages pages: a worker reserves a page
// before it takes a URL, and the reservation counts only if the request got a response.

import (
	"context"
	"sync"
)

// pageBudget counts pages against Config.MaxPages. With a max of 0 it never runs out.
type pageBudget struct {
	max int

	mu       sync.Mutex
	fetched  int // pages that got a response
	reserved int // workers holding a reservation
	changed  chan struct{}
}

func newPageBudget(max int) *pageBudget {
	return &pageBudget{max: max, changed: make(chan struct{})}
}

// reserve waits until a page may be fetched without overshooting the budget — every page not
// yet fetched may be held by a worker at once — and holds it. It returns false once the budget
// is spent, or when ctx ends.
func (b *pageBudget) reserve(ctx context.Context) bool {
	if b.max == 0 {
		return ctx.Err() == nil
	}
	for {
		b.mu.Lock()
		if b.fetched >= b.max {
			b.mu.Unlock()
			return false
		}
		if b.fetched+b.reserved < b.max {
			b.reserved++
			b.mu.Unlock()
			return true
		}
		changed := b.changed
		b.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

// settle ends a reservation: it counts as a page when the request got a response, and is given
// back otherwise.
func (b *pageBudget) settle(gotResponse bool) {
	if b.max == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reserved--
	if gotResponse {
		b.fetched++
	}
	close(b.changed)
	b.changed = make(chan struct{})
}

// left returns how many pages may still be fetched, or -1 without a limit.
func (b *pageBudget) left() int {
	if b.max == 0 {
		return -1
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return max(0, b.max-b.fetched)
}

// spent reports whether MaxPages pages have been fetched.
func (b *pageBudget) spent() bool {
	if b.max == 0 {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fetched >= b.max
}
