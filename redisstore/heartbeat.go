// How a live process keeps what it holds: every third of the lease expiry it renews its start
// slots, the URLs it took, the robots.txt locks and the discovery claims it holds, so that only a
// dead process loses them.

package redisstore

import (
	"context"
	"maps"
	"sync"
	"time"
)

// heartbeat runs the renewals of a store's pieces on one goroutine, started by the first piece
// that holds something.
type heartbeat struct {
	every time.Duration

	mu      sync.Mutex
	jobs    []func(ctx context.Context)
	started bool
	stopped bool
	quit    chan struct{}
	done    chan struct{}
}

func newHeartbeat(s *Store) *heartbeat {
	return &heartbeat{every: s.opts.LeaseExpiry / 3, quit: make(chan struct{}), done: make(chan struct{})}
}

// add registers a renewal, run on every beat, and starts the beat. A job reports its own
// failures; the next beat tries again.
func (h *heartbeat) add(job func(ctx context.Context)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.jobs = append(h.jobs, job)
	if !h.started && !h.stopped {
		h.started = true
		go h.run()
	}
}

func (h *heartbeat) run() {
	defer close(h.done)
	t := time.NewTicker(h.every)
	defer t.Stop()
	for {
		select {
		case <-h.quit:
			return
		case <-t.C:
		}
		h.mu.Lock()
		jobs := h.jobs
		h.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), h.every)
		for _, job := range jobs {
			job(ctx)
		}
		cancel()
	}
}

// stop ends the beat; what the process holds then expires within the lease expiry.
func (h *heartbeat) stop() {
	h.mu.Lock()
	started := h.started
	if !h.stopped {
		h.stopped = true
		close(h.quit)
	}
	h.mu.Unlock()
	if started {
		<-h.done
	}
}

// heldKeys are the keys a piece holds under a lease — a robots.txt fetch lock, a discovery claim
// — each with the token that says it is this process's: what the piece's heartbeat job renews.
// The zero value is ready to use.
type heldKeys struct {
	mu sync.Mutex
	m  map[string]string
}

// hold starts renewing key, held with token.
func (h *heldKeys) hold(key, token string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]string{}
	}
	h.m[key] = token
}

// drop stops renewing key if token still holds it.
func (h *heldKeys) drop(key, token string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m[key] == token {
		delete(h.m, key)
	}
}

// snapshot returns the held keys and their tokens, for a renewal that runs without the lock.
func (h *heldKeys) snapshot() map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.m)
}
