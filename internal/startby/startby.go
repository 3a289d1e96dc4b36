// Package startby carries a request's start bound — the time by which a person's request must
// have started, or be refused — through the layers of the door. A user-triggered door sets it
// (Policy.MaxWait); the robots gate, the retry layer and the host clock each keep their own wait
// within it. It is plumbing between etiquette's packages: a user sets Policy.MaxWait and reads
// politeness.ErrMaxWaitPassed.
package startby

import (
	"context"
	"errors"
	"fmt"
	"time"
)

type key struct{}

// With returns a copy of ctx that asks the layers to start the request by t at the latest: its
// wait for the origin's turn is bounded by t, while the exchange with the server keeps its own
// timeout (it does not inherit t as a deadline). When the host clock already knows the earliest
// start is later than t, the request fails at once with a *hostclock.WaitTooLongError; when it
// waited (in line behind the origin's requests in flight) until t, with the clock's error for a
// wait cut short, marked with ErrPassed (errors.Is(err, context.DeadlineExceeded) holds too). A
// zero t removes the bound. Retries of the request carry ctx; Go's http.Client builds a redirect
// hop from the caller's context, so a caller that bounds a whole chain passes the bound on (the
// door's wait bound does).
func With(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, key{}, t)
}

// From returns the bound With put on ctx, if any.
func From(ctx context.Context) (time.Time, bool) {
	t, ok := ctx.Value(key{}).(time.Time)
	return t, ok && !t.IsZero()
}

// ErrPassed marks the error of a request whose wait reached its start bound (With) before it was
// let through: errors.Is(err, ErrPassed) tells such a wait from a request that started and then
// timed out (both also match context.DeadlineExceeded). politeness exports it as
// ErrMaxWaitPassed.
var ErrPassed = errors.New("the wait reached its start bound")

// Wait runs wait with ctx bounded by its start bound (With), if it has one, and marks the error of
// a wait the bound cut short with ErrPassed. It is how every wait of a bounded request — for a
// slot in the host clock, for robots.txt in the door — keeps to the bound.
func Wait[T any](ctx context.Context, wait func(context.Context) (T, error)) (T, error) {
	by, bounded := From(ctx)
	if !bounded {
		return wait(ctx)
	}
	bctx, cancel := context.WithDeadline(ctx, by)
	defer cancel()
	v, err := wait(bctx)
	if err != nil && ctx.Err() == nil && errors.Is(bctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("%w: %w", ErrPassed, err)
	}
	return v, err
}
