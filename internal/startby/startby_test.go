package startby

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A wait the bound cuts short is marked ErrPassed; one the caller's own context ends is not, so a
// caller can tell "the site's turn did not come in time" from "I gave up".
func TestWaitMarksOnlyTheBound(t *testing.T) {
	block := func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() }

	_, err := Wait(With(context.Background(), time.Now().Add(20*time.Millisecond)), block)
	if !errors.Is(err, ErrPassed) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait cut by the bound: err = %v; want ErrPassed and DeadlineExceeded", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = Wait(With(ctx, time.Now().Add(time.Hour)), block)
	if errors.Is(err, ErrPassed) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait ended by the caller's deadline: err = %v; want DeadlineExceeded, not ErrPassed", err)
	}

	// A zero bound removes it: the wait runs on the caller's context alone.
	if v, err := Wait(With(context.Background(), time.Time{}), func(context.Context) (int, error) { return 7, nil }); v != 7 || err != nil {
		t.Fatalf("unbounded wait = %d, %v; want 7, nil", v, err)
	}
	if _, ok := From(With(context.Background(), time.Time{})); ok {
		t.Fatal("From reports a bound after With(ctx, zero time)")
	}
}
