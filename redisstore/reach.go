// What happens while Redis cannot be reached: operations wait for it, for a bounded time, and
// then fail — they never go ahead without it.

package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// UnavailableError is returned when Redis could not be reached for Options.Wait: nothing that
// depends on it (a start slot, a URL, a robots.txt lock) was granted in that time. Raise
// Options.Wait to ride out longer outages.
type UnavailableError struct {
	URL   string        // the Redis server, without its password
	Op    string        // what could not be done
	Since time.Time     // when Redis stopped answering
	Wait  time.Duration // how long operations waited for it
	Err   error         // the last error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("redisstore: %s: Redis at %s has not answered since %s (waited %s): %v; "+
		"the crawl's budget is shared through it, so nothing is sent without it: bring Redis back, or let the crawl wait longer for it",
		e.Op, e.URL, e.Since.Format(time.TimeOnly), e.Wait, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// Retry pacing while Redis is away: a quick first retry (a restart takes a moment), doubling to
// at most a second between attempts.
const (
	firstRetry = 50 * time.Millisecond
	maxRetry   = time.Second
)

// reach tracks whether Redis answers. The outage is shared by every operation of the store: once
// Redis has been away for wait, every operation fails at once until one succeeds again, so a
// crawl does not wait wait again for each of its requests.
type reach struct {
	url  string
	wait time.Duration
	log  *slog.Logger

	mu      sync.Mutex
	since   time.Time // when the outage began; zero while Redis answers
	lastErr error
}

// do runs op until it succeeds, fails for another reason than reaching Redis, ctx ends, or the
// outage has lasted wait; then it returns an *UnavailableError. Each attempt runs under a
// deadline at the end of the wait (counted from the attempt's start when no outage is under
// way), so that a server that holds the connection without answering — frozen, or behind a
// network that drops packets — is given up on time, on a client with ContextTimeoutEnabled.
// An outage begins when its first failed attempt began.
func (r *reach) do(ctx context.Context, what string, op func(ctx context.Context) error) error {
	delay := firstRetry
	for {
		began := time.Now()
		actx, cancel := context.WithDeadline(ctx, r.deadline(began))
		err := op(actx)
		cancel()
		if err == nil || !transient(err) {
			r.answered()
			return r.explain(err)
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("redisstore: %s: %w", what, ctxErr)
		}
		since, left := r.failed(err, began)
		if left <= 0 {
			return &UnavailableError{URL: r.url, Op: what, Since: since, Wait: r.wait, Err: err}
		}
		t := time.NewTimer(min(delay, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("redisstore: %s while Redis at %s is unreachable: %w", what, r.url, ctx.Err())
		case <-t.C:
		}
		delay = min(2*delay, maxRetry)
	}
}

// deadline is when an attempt that begins at began must have ended: the end of the wait of the
// outage under way, or of one that would begin with it.
func (r *reach) deadline(began time.Time) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.since.IsZero() {
		return r.since.Add(r.wait)
	}
	return began.Add(r.wait)
}

// explain turns the answers of a server that cannot serve the store, whatever the wait, into
// errors that say what to change: a cluster node given as a server, a refused user or password.
func (r *reach) explain(err error) error {
	var re redis.Error
	if err == nil || !errors.As(err, &re) {
		return err
	}
	msg := re.Error()
	switch {
	case strings.HasPrefix(msg, "MOVED ") || strings.HasPrefix(msg, "ASK "):
		return &ClusterError{URL: r.url, Err: err}
	case strings.HasPrefix(msg, "WRONGPASS") || strings.HasPrefix(msg, "NOAUTH") || strings.HasPrefix(msg, "NOPERM"):
		return &AuthError{URL: r.url, Err: err}
	}
	return err
}

// failed records a failure of an attempt that began at began, and returns when the outage began
// and how much of the wait is left.
func (r *reach) failed(err error, began time.Time) (time.Time, time.Duration) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.since.IsZero() {
		r.since = began
		r.log.Warn("redisstore: Redis cannot be reached; nothing that needs it goes ahead until it answers",
			"redis", r.url, "err", err, "wait", r.wait)
	}
	r.lastErr = err
	return r.since, r.wait - now.Sub(r.since)
}

// answered ends an outage.
func (r *reach) answered() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.since.IsZero() {
		r.log.Info("redisstore: Redis answers again", "redis", r.url, "outage", time.Since(r.since).Round(time.Millisecond))
		r.since = time.Time{}
	}
}

// transient reports whether err means Redis could not be reached or could not serve yet (and may
// after a while), as opposed to an answer that will not change (a script error, a wrong type).
func transient(err error) bool {
	var ee *EvictionError
	var ce *ClusterError
	var ae *AuthError
	if errors.As(err, &ee) || errors.As(err, &ce) || errors.As(err, &ae) {
		return false
	}
	if errors.Is(err, redis.Nil) || errors.Is(err, context.Canceled) || errors.Is(err, redis.ErrClosed) {
		return false
	}
	var re redis.Error
	if errors.As(err, &re) {
		msg := re.Error()
		for _, p := range []string{"LOADING", "BUSY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "READONLY"} {
			if strings.HasPrefix(msg, p) {
				return true
			}
		}
		return false
	}
	return true // network errors, timeouts, a closed connection
}
