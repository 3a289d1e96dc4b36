package frontier

// This file decides how a producer of an origin's URLs — a discovery planner — holds the
// origin's pages back while it reads what the site publishes for machines, keeps the crawl from
// ending while it still has files to read, and learns when the origin's queue runs low.

import "fmt"

// Source is a producer of one origin's URLs that is not finished yet: a planner with sitemap
// files still to read. While a Source is open the crawl is not over — [Frontier.Next] does not
// return [ErrExhausted] — and while it holds its origin none of the origin's URLs is handed out
// but those [Source.Admit] lets through. So a planner can read an origin's sitemaps and llms.txt
// before any of its pages is fetched, let the start page through, and release the rest.
//
// Open one with [Frontier.OpenSource]: it starts holding. [Source.Low] says when the origin's
// queue has run low, so the next sitemap file is read only when it is needed. Close it when
// nothing more will come; Close releases the hold. A given-up origin's URLs are handed out
// refused whether it is held or not. A Source is safe for concurrent use; its zero value is not
// usable.
type Source struct {
	f *Frontier
	o *originState

	// Guarded by f.mu.
	holding bool
	closed  bool
	low     int
	lowCh   chan struct{} // nil while no Low is pending
}

// OpenSource opens a source for the origin of rawURL (any URL of it, normalised as Push does)
// and holds the origin. The error wraps [ErrBadURL] for a URL without an http(s) origin.
func (f *Frontier) OpenSource(rawURL string) (*Source, error) {
	_, key, err := normalize(rawURL)
	if err != nil {
		return nil, fmt.Errorf("frontier: opening a source: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.origin(key)
	s := &Source{f: f, o: o, holding: true}
	o.held++
	o.sources = append(o.sources, s)
	f.sources++
	f.fix(o)
	return s, nil
}

// Key returns the budget key of the source's origin.
func (s *Source) Key() string { return s.o.key }

// Admit lets the next n URLs of the held origin be handed out, in queue order, as if it were not
// held: a planner admits the start page it queued first. It does nothing once the source has
// released its hold or closed.
func (s *Source) Admit(n int) {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if !s.holding || n <= 0 {
		return
	}
	s.o.admit += n
	f.fix(s.o)
	f.signal()
}

// Release ends the hold: the origin's URLs are handed out as they may start. Calls after the
// first do nothing.
func (s *Source) Release() {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	s.release()
}

// release requires f.mu held.
func (s *Source) release() {
	if !s.holding {
		return
	}
	s.holding = false
	o := s.o
	o.held--
	if o.held == 0 {
		o.admit = 0
	}
	s.f.fix(o)
	s.f.signal()
}

// Low returns a channel that is closed once the origin has at most n URLs waiting (at once, when
// it has now). A URL handed out no longer waits. A later Low replaces an earlier one that has not
// fired; its channel is never closed. The channel does not close when the crawl ends: wait on it
// together with the crawl's context.
func (s *Source) Low(n int) <-chan struct{} {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan struct{})
	s.low, s.lowCh = n, ch
	f.checkLow(s.o)
	return ch
}

// Close says the source will bring no more URLs: it releases the hold, and the crawl may end
// once the queues are empty. Calls after the first do nothing.
func (s *Source) Close() {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if s.closed {
		return
	}
	s.release()
	s.closed = true
	s.lowCh = nil
	o := s.o
	for i, x := range o.sources {
		if x == s {
			o.sources = append(o.sources[:i], o.sources[i+1:]...)
			break
		}
	}
	f.sources--
	f.signal()
}

// checkLow fires the pending Low of every source of o whose mark the queue has reached. It
// requires f.mu held.
func (f *Frontier) checkLow(o *originState) {
	for _, s := range o.sources {
		if s.lowCh != nil && o.queued <= s.low {
			close(s.lowCh)
			s.lowCh = nil
		}
	}
}
