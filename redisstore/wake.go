// How a process waiting for a place hears that another process freed one: a message on the
// origin's freed channel (pub/sub), which the done script publishes.

package redisstore

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// subscribeTimeout bounds a SUBSCRIBE or UNSUBSCRIBE; a wait that could not subscribe still ends
// after maxConcurrencyWait.
const subscribeTimeout = 2 * time.Second

// wakeups subscribes to the freed channels of the origins this process waits on, and calls
// freed with the origin's budget key for every message. One connection serves them all; it is
// opened at the first wait for a place.
type wakeups struct {
	client redis.UniversalClient
	freed  func(budget string)
	log    *slog.Logger

	mu     sync.Mutex
	ps     *redis.PubSub
	count  map[string]int // waiters per channel
	closed bool
}

func newWakeups(client redis.UniversalClient, freed func(string), log *slog.Logger) *wakeups {
	return &wakeups{client: client, freed: freed, log: log, count: map[string]int{}}
}

// watch subscribes to channel for one more waiter.
func (w *wakeups) watch(channel string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.count[channel]++
	if w.count[channel] > 1 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), subscribeTimeout)
	defer cancel()
	if w.ps == nil {
		w.ps = w.client.Subscribe(ctx)
		go w.listen(w.ps.Channel())
	}
	if err := w.ps.Subscribe(ctx, channel); err != nil {
		w.log.Debug("redisstore: could not listen for freed places; waiting on the lease expiry instead", "channel", channel, "err", err)
	}
}

// unwatch drops one waiter of channel, and the subscription with the last.
func (w *wakeups) unwatch(channel string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.count[channel] == 0 {
		return
	}
	w.count[channel]--
	if w.count[channel] > 0 {
		return
	}
	delete(w.count, channel)
	ctx, cancel := context.WithTimeout(context.Background(), subscribeTimeout)
	defer cancel()
	_ = w.ps.Unsubscribe(ctx, channel)
}

func (w *wakeups) listen(msgs <-chan *redis.Message) {
	for m := range msgs {
		if budget := budgetOf(m.Channel); budget != "" {
			w.freed(budget)
		}
	}
}

func (w *wakeups) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.ps != nil {
		_ = w.ps.Close()
	}
}
