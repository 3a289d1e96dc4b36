package redisstore_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/discovery/plan"
	"github.com/politecrawl/etiquette/redisstore"
	"github.com/politecrawl/etiquette/redisstore/redistest"
)

// process is one process's store on srv, for the crawl "claims".
func process(t *testing.T, srv *redistest.Server, lease time.Duration) *redisstore.Store {
	t.Helper()
	st, err := redisstore.New(srv.Client(), redisstore.Options{Crawl: "claims", LeaseExpiry: lease, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

type claimResult struct {
	c     plan.Claim
	phase plan.Phase
	err   error
}

// claimAsync calls Claim on its own goroutine.
func claimAsync(d *redisstore.DiscoveryClaims, ctx context.Context, origin string, seen plan.Phase) <-chan claimResult {
	got := make(chan claimResult, 1)
	go func() {
		c, ph, err := d.Claim(ctx, origin, seen)
		got <- claimResult{c, ph, err}
	}()
	return got
}

func awaitClaim(t *testing.T, got <-chan claimResult) claimResult {
	t.Helper()
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("Claim did not return")
	}
	return claimResult{}
}

const claimed = "https://shop.example:8443"

func TestOneProcessDiscoversAnOriginAndTheOthersFollowItsPhases(t *testing.T) {
	srv := redistest.Start(t)
	a, b := process(t, srv, 0).Discovery(), process(t, srv, 0).Discovery()
	ctx := t.Context()

	ca, phase, err := a.Claim(ctx, claimed, plan.PhaseFree)
	if err != nil || ca == nil || phase != plan.PhaseHeld {
		t.Fatalf("first Claim = %v, %v, %v; want the claim, held", ca, phase, err)
	}
	keys := srv.Client().Keys(ctx, "*discovery*").Val()
	if len(keys) != 1 || !strings.HasPrefix(keys[0], redisstore.CrawlPrefix("claims")+"{shop.example:8443}:discovery:") {
		t.Fatalf("keys %q; want one claim under the crawl's prefix, tagged with the origin", keys)
	}
	if cb, phase, err := b.Claim(ctx, claimed, plan.PhaseFree); err != nil || cb != nil || phase != plan.PhaseHeld {
		t.Fatalf("second process's Claim = %v, %v, %v; want no claim: held by the first", cb, phase, err)
	}

	released := claimAsync(b, ctx, claimed, plan.PhaseHeld)
	if err := ca.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if r := awaitClaim(t, released); r.c != nil || r.phase != plan.PhaseReleased {
		t.Fatalf("follower after Release: %v, %v; want released, no claim", r.c, r.phase)
	}
	done := claimAsync(b, ctx, claimed, plan.PhaseReleased)
	if err := ca.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	if r := awaitClaim(t, done); r.c != nil || r.phase != plan.PhaseDone {
		t.Fatalf("follower after Finish: %v, %v; want done, no claim", r.c, r.phase)
	}
	// A process that joins later learns the discovery is over; nobody discovers it again.
	if c, phase, err := process(t, srv, 0).Discovery().Claim(ctx, claimed, plan.PhaseFree); err != nil || c != nil || phase != plan.PhaseDone {
		t.Fatalf("a late process's Claim = %v, %v, %v; want done, no claim", c, phase, err)
	}
}

func TestAnAbandonedDiscoveryIsTakenOverAtOnce(t *testing.T) {
	srv := redistest.Start(t)
	a, b := process(t, srv, time.Hour).Discovery(), process(t, srv, time.Hour).Discovery()
	ctx := t.Context()
	ca, _, err := a.Claim(ctx, claimed, plan.PhaseFree)
	if err != nil || ca == nil {
		t.Fatalf("Claim = %v, %v", ca, err)
	}
	following := claimAsync(b, ctx, claimed, plan.PhaseHeld)
	ca.Abandon()
	r := awaitClaim(t, following)
	if r.c == nil || r.phase != plan.PhaseHeld {
		t.Fatalf("follower after Abandon: %v, %v; want it to hold the claim", r.c, r.phase)
	}
	if err := ca.Release(ctx); err != nil {
		t.Fatal(err) // an ended claim does nothing
	}
	if err := r.c.Release(ctx); err != nil {
		t.Fatalf("the new holder's Release: %v", err)
	}
}

func TestTheDiscoveryOfAProcessThatDiedIsTakenOverWhenItsClaimExpires(t *testing.T) {
	srv := redistest.Start(t)
	const lease = 900 * time.Millisecond
	dead := process(t, srv, lease)
	live := process(t, srv, lease)
	ctx := t.Context()
	if c, _, err := dead.Discovery().Claim(ctx, claimed, plan.PhaseFree); err != nil || c == nil {
		t.Fatalf("Claim = %v, %v", c, err)
	}
	dead.Close() // its heartbeat stops: the process is gone
	claimedAt := time.Now()
	r := awaitClaim(t, claimAsync(live.Discovery(), ctx, claimed, plan.PhaseHeld))
	if r.c == nil {
		t.Fatalf("follower: %v, %v; want the claim once the dead holder's expired", r.c, r.phase)
	}
	if waited := time.Since(claimedAt); waited < lease/2 {
		t.Fatalf("the claim was taken over after %v, before the dead holder's lease of %v ran out", waited, lease)
	}
}

func TestALiveHolderKeepsItsClaimPastTheLease(t *testing.T) {
	srv := redistest.Start(t)
	const lease = 600 * time.Millisecond
	holder, other := process(t, srv, lease), process(t, srv, lease)
	ctx := t.Context()
	c, _, err := holder.Discovery().Claim(ctx, claimed, plan.PhaseFree)
	if err != nil || c == nil {
		t.Fatalf("Claim = %v, %v", c, err)
	}
	// The other process follows for three leases without getting the claim: the heartbeat renews it.
	wait, cancel := context.WithTimeout(ctx, 3*lease)
	defer cancel()
	if c2, phase, err := other.Discovery().Claim(wait, claimed, plan.PhaseHeld); c2 != nil || err == nil {
		t.Fatalf("Claim while the holder lives = %v, %v, %v; want it to wait until its context ends", c2, phase, err)
	}
	if err := c.Finish(ctx); err != nil {
		t.Fatalf("the holder's Finish after three leases: %v", err)
	}
}
