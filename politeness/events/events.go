// Package events is the door's single stream of what it decided: a request admitted, a wait and
// why, a refusal and why, a response with its status, cache outcome and size. The CLI's JSON lines,
// the statistics and the slog log are all subscribers of one [Bus], so they never disagree.
package events

import (
	"net/url"
	"slices"
	"strings"
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
	// Refused: a request was not sent; Reason says why ("robots", "budget", "error", "stopped",
	// "private-network") and Detail gives the deciding rule or error text.
	Refused Type = "refused"
	// Response: a response reached the top of the door; Status, Cache and Bytes are set, and Reason
	// when the cache answered for a reason beyond RFC 9111 ("lastmod"). Bytes is
	// the decoded body size delivered, known only when the body has been read or closed, so this
	// event is emitted then.
	Response Type = "response"
	// Paused: the origin was paused (Retry-After, backoff, give-up); Until says until when.
	Paused Type = "paused"
	// Retried: the backoff layer re-sent a request after a 429/503 or a transient error.
	Retried Type = "retried"
	// Notice: something an operator should know that is not about one request; Reason says what
	// ("door-bypassed": a weakened collector, "truncated": a body cut at its cap,
	// "cookie-refused", "backlog": too many requests waiting, "cache-corrupt", "latency": an origin
	// slowed by its response time, or recovered; "user-agent-replaced": a caller's User-Agent the
	// identity replaced, once per door).
	Notice Type = "notice"
)

// Event is one decision of the door. Fields that do not apply to a Type are zero.
type Event struct {
	Time      time.Time
	Type      Type
	URL       string // never with a password: Bus.Emit redacts userinfo to user:xxxxx@
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

// Discard is a Sink that drops every event (a value, as io.Discard is: never reassign it).
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

// Emit sends e to every subscriber, stamping Time when it is zero and replacing a password in
// URL by xxxxx (url.URL.Redacted), so that no subscriber — a log, a JSON line, a counter — can
// print one.
func (b *Bus) Emit(e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.URL = redact(e.URL)
	b.mu.Lock()
	subs := b.subs
	b.mu.Unlock()
	for _, s := range subs {
		s.fn(e)
	}
}

// redact returns rawURL with the password of its userinfo replaced by xxxxx
// (https://user:xxxxx@host/), as url.URL.Redacted does. A string that does not parse as a URL
// loses its whole userinfo instead (https://xxxxx@host/).
func redact(rawURL string) string {
	if !strings.Contains(rawURL, "@") {
		return rawURL
	}
	if u, err := url.Parse(rawURL); err == nil {
		return u.Redacted()
	}
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return rawURL
	}
	authority := rest
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		authority = rest[:end]
	}
	at := strings.LastIndex(authority, "@")
	if at < 0 {
		return rawURL
	}
	return scheme + "://xxxxx@" + rest[at+1:]
}
