// Package events is the door's single stream of what it decided: a request admitted, a wait and
// why, a refusal and why, a response with its status, cache outcome and size. The CLI's JSON lines,
// the statistics and the slog log are all subscribers of one [Bus], so they never disagree.
package events

import (
	"slices"
	"sync"
	"time"

	"github.com/politecrawl/etiquette/politeness/kind"
)

// Type says what happened.
type Type string

// The event types.
const (
	// Admitted: a request passed the robots gate and is on its way down the stack.
	Admitted Type = "admitted"
	// Waited: a request waited for its turn; Reason says why (rate, crawl-delay, latency,
	// retry-after, backoff, concurrency, robots) and Wait for how long.
	Waited Type = "waited"
	// Refused: a request was not sent; Reason says why ("robots", "budget", "error", …) and Detail
	// gives the deciding rule or error text.
	Refused Type = "refused"
	// Response: a response reached the top of the door; Status, Cache and Bytes are set. Bytes is
	// the decoded body size delivered, known only when the body has been read or closed, so this
	// event is emitted then.
	Response Type = "response"
	// Paused: the origin was paused (Retry-After, backoff, give-up); Until says until when.
	Paused Type = "paused"
	// Retried: the backoff layer re-sent a request after a 429/503 or a transient error.
	Retried Type = "retried"
	// Notice: something an operator should know that is not about one request (a weakened
	// collector, a truncated body, a cookie refused, an origin slowed by its response time:
	// reason "latency").
	Notice Type = "notice"
)

// Event is one decision of the door. Fields that do not apply to a Type are zero.
type Event struct {
	Time      time.Time
	Type      Type
	URL       string
	Origin    string // the budget key (host[:port])
	Kind      kind.Kind
	Method    string
	Status    int
	Cache     string // miss, fresh, revalidated, stale, or "" when the cache did not take part
	Bytes     int64
	Truncated bool
	Reason    string
	Detail    string
	Wait      time.Duration
	Until     time.Time
	Err       error
}

// Sink receives events. Implementations must be safe for concurrent use and must not block.
type Sink interface {
	Emit(Event)
}

// Discard is a Sink that drops every event.
var Discard Sink = discard{}

type discard struct{}

func (discard) Emit(Event) {}

// Bus fans events out to subscribers. The zero value is ready to use and has no subscribers.
// Emit calls every subscriber synchronously, in subscription order; a subscriber must be quick.
type Bus struct {
	mu   sync.Mutex
	next int
	subs []subscriber // replaced, never mutated, so Emit can read it without the lock held
}

type subscriber struct {
	id int
	fn func(Event)
}

// Subscribe registers fn and returns a function that removes it.
func (b *Bus) Subscribe(fn func(Event)) (cancel func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := b.next
	b.next++
	b.subs = append(b.subs[:len(b.subs):len(b.subs)], subscriber{id, fn})
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.subs = slices.DeleteFunc(slices.Clone(b.subs), func(s subscriber) bool { return s.id == id })
	}
}

// Emit sends e to every subscriber, stamping Time when it is zero.
func (b *Bus) Emit(e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	b.mu.Lock()
	subs := b.subs
	b.mu.Unlock()
	for _, s := range subs {
		s.fn(e)
	}
}
