// The contract every clock keeps (Clock, Lease) and the values it hands its callers.

// Package hostclock decides when a request may start: per origin, at most a few starts per
// second, evenly spaced, a small number in flight, no sooner than robots.txt's Crawl-delay allows,
// less often while the origin answers slowly, and not at all while it is paused after a 429, a
// 503 or a run of errors.
//
// "Origin" here is a budget key as [origin.BudgetKey] returns it: host plus port, the default ports
// folded, so http and https of one host share one budget — they are one server to the operator who
// pays for it.
//
// The schedule is GCRA with a burst of one: the next start to an origin is due one interval
// after the previous one was due, where the interval is 1/rate lengthened by a small margin
// ([Config.Interval]: room for 100 ms of jitter on the way to the server's log); the Crawl-delay floor and the response time's interval
// ([Config.LatencyFactor]) are minimum gaps after the previous start. There is no initial burst
// (unlike a token bucket of size 3), and a start that a busy machine granted late does not push
// back every later one. On top of it a window rule, counted from when requests actually reached
// the server as far as the client can tell, keeps any one second from holding more than rate
// starts in the server's own log, however the schedule catches up; see [Local].
//
// A user of the door does not call this package: politeness.NewDoor puts [Layer] on [Shared],
// the process-wide clock, and Policy.Rate and Policy.Concurrency set the budget. What a user
// meets here is a [*WaitTooLongError] and its Reason constants, [NewLocal] for a door with a
// clock of its own (Policy.Clock, as a test does), and redisstore's implementation of the same
// [Clock] interface, which lets several processes share one budget. Code that builds its own
// transport puts [Layer] on a Clock and never calls Acquire itself; a crawl frontier asks
// [Clock.Earliest] which origin may start next.
package hostclock

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/politecrawl/etiquette/politeness/kind"
)

// Outcome is what became of a request that held a slot, reported through [Lease.Done].
// The zero value is a success that teaches the clock nothing but that the origin answered.
type Outcome struct {
	Status     int           // the response status; 0 when there was no response
	RetryAfter time.Duration // the response's Retry-After, parsed; 0 when absent or unusable
	Err        error         // the transport or body-read error, if any
}

// Grant says when a slot was granted and how long Acquire waited for it, and why.
type Grant struct {
	At     time.Time
	Wait   time.Duration
	Reason string // the reason that accounted for most of the wait: one of the Reason constants; "" when Wait is 0
}

// Pause is a period during which no request to an origin starts.
type Pause struct {
	Until  time.Time
	Reason string // ReasonRetryAfter, ReasonBackoff or ReasonGiveUp, or the caller's reason for Clock.Pause
}

// Lease is a granted start slot. It holds one of the origin's concurrency places until Done is
// called — exactly when the response body has been closed or read to EOF, or when the request
// failed. Done may be called more than once; only the first call counts. A lease that is never
// done expires (Config.LeaseTTL), so a leaked body cannot block an origin for the rest of the crawl.
type Lease interface {
	// Done frees the slot and teaches the clock the outcome: a 429 pauses the origin and lowers its
	// rate, a 503 pauses it, other 5xx and errors pause it more mildly, a success counts toward
	// recovery, and a Retry-After on a 3xx or 5xx is honoured. Every response (any status, 304
	// included; not an error) also tells the clock the origin's response time, from Sent (else the
	// grant) to Done.
	Done(Outcome)
	// Sent reports that the request has just reached the server, as far as the client can tell
	// (Layer calls it when the request was written, and on a new connection again when the first
	// response byte came). The clock counts the origin's window from the latest report, so a
	// request that took long to arrive does not let the next ones crowd it in the server's log,
	// and the response time from the first. Optional: without it the grant counts for both.
	Sent()
	// Grant reports when the slot was granted and how long the caller waited for it.
	Grant() Grant
	// Caused returns the pause that Done started for the origin, if it started one.
	// It is meaningful after Done returned.
	Caused() (Pause, bool)
	// Paced returns the change in the origin's spacing that this response's time made, if it
	// made one (see [Pace]). It is meaningful after Done returned.
	Paced() (Pace, bool)
}

// Clock is the per-origin start schedule every request of the process (or, with a shared store,
// of every process) passes. Implementations must be safe for concurrent use.
//
// The interface is shaped for a store such as Redis as much as for memory: Acquire is a GCRA
// reservation (go-redis/redis_rate, or one Lua script) plus a counted semaphore whose leases
// expire; Pause and the Crawl-delay floor are keys with an expiry; Stats are counters. Nothing in it
// needs a callback from the store or a lock held across calls.
type Clock interface {
	// Acquire waits until a request to key may start — the origin's interval since the previous
	// start has passed, a concurrency place is free and no pause holds — and returns the lease for
	// it. It returns ctx's error if ctx ends first, a *WaitTooLongError at once when ctx's
	// deadline comes before the earliest start the clock knows of, and a *GiveUpError once the
	// origin has been given up. k is the request's kind: robots.txt requests go ahead of pages in
	// the queue.
	Acquire(ctx context.Context, key string, k kind.Kind) (Lease, error)
	// SetFloor records that source asks for at least interval between starts to key: the
	// Crawl-delay of one robots.txt for one product token, source naming both (e.g.
	// "https://h.example:443 ExampleBot"). Several sources share a key — http and https of a host
	// have a robots.txt each, and doors with different tokens read different groups — so the
	// clock keeps each source's delay and applies the largest. An interval ≤ 0 withdraws source's
	// delay (the site dropped its Crawl-delay); a floor above the implementation's maximum is
	// capped there and reported.
	SetFloor(key, source string, interval time.Duration)
	// Pause keeps every request to key from starting before until. An earlier pause is only ever
	// lengthened, never shortened.
	Pause(key string, until time.Time, reason string)
	// Earliest returns the earliest moment a request to key could be granted if it asked now:
	// the interval since the previous start, the Crawl-delay floor, the
	// interval the origin's response time asks for, or the end of a pause. It reserves nothing,
	// and it ignores the concurrency cap and the requests already waiting: a crawl frontier
	// that keeps at most Concurrency requests of an origin in progress itself asks it to hand a
	// worker the next origin that may start, as Scrapy's slots do. An origin given up returns
	// its *GiveUpError. A time that is not after the caller's own "now" means "at once" (an
	// origin the clock has not seen returns the zero time): the clock does not clamp it to its
	// own reading of now, which would always lie a little after the caller's and make a caller
	// comparing with its now wait for nothing. It is cheap enough to ask for every origin each
	// time a worker is free.
	Earliest(key string) (time.Time, error)
	// PausedUntil reports the pause in force for key (a zero Until when none is), and a
	// *GiveUpError when the origin has been given up for this crawl.
	PausedUntil(key string) (until time.Time, reason string, err error)
	// Stats returns a snapshot of every origin's counters, sorted by key.
	Stats() []OriginStats
}

// The reasons a request waits or an origin pauses, as they appear in logs, events and Grant.
const (
	ReasonRate        = "rate"        // the origin's request rate
	ReasonCrawlDelay  = "crawl-delay" // robots.txt Crawl-delay, stricter than the rate
	ReasonRetryAfter  = "retry-after" // the server's Retry-After
	ReasonBackoff     = "backoff"     // exponential backoff after 429, 5xx or errors
	ReasonConcurrency = "concurrency" // the origin's in-flight cap
	ReasonLatency     = "latency"     // the origin's response time, slower than its budget (Config.LatencyFactor)
	ReasonGiveUp      = "give-up"     // the origin was given up for this crawl
)

// GiveUpError is returned by Acquire for an origin the clock has given up for this crawl: its
// error budget is spent, or it asked for a Retry-After beyond the ceiling.
type GiveUpError struct {
	Origin string
	Reason string
	At     time.Time
}

func (e *GiveUpError) Error() string {
	return fmt.Sprintf("hostclock: origin %s was given up for this crawl at %s: %s; "+
		"no further request is sent to it (start a new crawl, or a new Clock, to try it again)",
		e.Origin, e.At.UTC().Format(time.RFC3339), e.Reason)
}

// WaitTooLongError is returned at once by Acquire, which reserves nothing then, when the request's
// context ends before the earliest start the clock knows of for its origin — after the schedule's
// interval, the Crawl-delay floor, the response time's interval or a pause. The request could
// only have waited and then failed; a caller with other work (another origin, a person waiting)
// gets the answer now. errors.Is(err, context.DeadlineExceeded) holds, as it would have after
// the wait.
type WaitTooLongError struct {
	Origin   string        // the budget key
	Earliest time.Time     // the earliest start the clock knows of, on the clock's time
	Reason   string        // the rule that sets it: one of the Reason constants, or the reason of a Clock.Pause
	Deadline time.Time     // the request context's deadline
	Wait     time.Duration // from the refusal to Earliest
	Left     time.Duration // from the refusal to Deadline
}

func (e *WaitTooLongError) Error() string {
	return fmt.Sprintf("hostclock: origin %s cannot start before %s (%s, %s from now); the request's deadline is %s away: "+
		"send it later, or give it a later deadline", e.Origin, e.Earliest.Format(time.TimeOnly), e.Reason, roughly(e.Wait), roughly(e.Left))
}

// Is reports that the error is a deadline error: the request's deadline is what refuses it.
func (e *WaitTooLongError) Is(target error) bool { return target == context.DeadlineExceeded }

// roughly formats d for a person: whole tenths of seconds from one second on ("60s", "2.5s"),
// milliseconds below.
func roughly(d time.Duration) string {
	if d < time.Second && d > -time.Second {
		return d.Round(time.Millisecond).String()
	}
	return strconv.FormatFloat(d.Round(100*time.Millisecond).Seconds(), 'f', -1, 64) + "s"
}

var shared = sync.OnceValue(func() *Local { return newLocal(defaults(Config{})) })

// Shared returns the process-wide clock with the default configuration (3 starts per second per
// origin, 2 in flight). It is the one global in the project, and deliberately so: the site pays
// for the crawler as a whole, so every collector, clone and goroutine of a process must draw on one
// budget per origin — two clocks would double the load on the server. Pass your own Clock through
// the policy for tests, for authorised higher rates, or to share the budget across processes.
func Shared() *Local { return shared() }
