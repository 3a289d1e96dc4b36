package plan

// This file decides how crawls that share one frontier storage — processes on one Redis — read
// an origin's discovery documents once: one of them claims the origin's discovery, the others
// hold the origin's pages as it does and take the URLs it queues from the shared queue.

import "context"

// Phase is how far the discovery of an origin has come in the crawl that claimed it.
type Phase int

const (
	// PhaseFree: no crawl holds the origin's discovery (none began it, or its holder died or gave
	// it up unfinished); the next Claims.Claim takes it.
	PhaseFree Phase = iota
	// PhaseHeld: a crawl reads the origin's sitemaps and llms.txt and waits for its start page;
	// every crawl holds the origin's other pages back.
	PhaseHeld
	// PhaseReleased: the origin's pages may go; the holder may still read sitemap files as the
	// origin's queue runs low.
	PhaseReleased
	// PhaseDone: the origin's discovery is over; nothing more comes of it.
	PhaseDone
)

func (ph Phase) String() string {
	switch ph {
	case PhaseFree:
		return "free"
	case PhaseHeld:
		return "held"
	case PhaseReleased:
		return "released"
	case PhaseDone:
		return "done"
	}
	return "unknown"
}

// Claims shares the discovery of each origin between crawls that share one frontier storage
// (a frontier.SharedStorage), so that exactly one of them reads an origin's discovery documents
// — robots.txt's sitemaps, llms.txt, what the start page advertises — and queues what they list,
// while the others take those URLs from the shared queue. Give every crawl of the shared
// storage the same Claims store; redisstore.Store.Discovery is one.
//
// An implementation keeps a claim alive while its holder lives (a lease it renews) and frees it
// when the holder stops renewing it, so that a crawl that died holding an origin's discovery
// loses it within the lease and another takes the discovery over. Methods must be safe for
// concurrent use.
type Claims interface {
	// Claim takes the discovery of origin (an origin.RobotsKey: "https://example.org") for this
	// crawl when it is free: it then returns a non-nil Claim, and the phase is PhaseHeld.
	// Otherwise it waits until the origin's phase in the crawl that holds it is later than seen,
	// or the discovery became free and this crawl took it, and returns the phase with a nil
	// Claim. It returns an error when the store cannot be asked (ctx ended, the store is out of
	// reach for longer than it waits).
	Claim(ctx context.Context, origin string, seen Phase) (Claim, Phase, error)
}

// Claim is one crawl's hold on an origin's discovery, from [Claims.Claim].
type Claim interface {
	// Release says that the origin's pages may go: the other crawls stop holding them back.
	Release(ctx context.Context) error
	// Finish says that the origin's discovery is over, for every crawl of the shared storage:
	// no crawl claims it again. The claim ends.
	Finish(ctx context.Context) error
	// Abandon gives the claim up unfinished (this crawl stops): another crawl may take the
	// discovery over at once. The claim ends.
	Abandon()
}

// follow runs the origin's discovery with Config.Claims: this crawl reads the documents when it
// claims the origin, and otherwise holds the origin's pages back while another crawl does,
// releases them when that crawl does, and ends when it is done — or takes the discovery over
// when that crawl dies or gives it up. A crawl that does not discover pushes its start URLs once
// the holder released the origin, so that the holder's start page is the origin's first.
func (op *originPlan) follow(ctx context.Context) {
	p := op.p
	seen := PhaseFree
	for {
		c, phase, err := p.claims.Claim(ctx, op.origin, seen)
		if err != nil {
			if ctx.Err() == nil {
				p.log.Warn("plan: the origin's discovery cannot be shared; this crawl does not discover it",
					"origin", op.origin, "err", err)
			}
			op.pushStarts(false)
			return
		}
		if c != nil {
			op.claim = c
			op.pushStarts(true)
			if op.discover(ctx) {
				if err := c.Finish(context.WithoutCancel(ctx)); err != nil {
					p.log.Warn("plan: could not tell the other crawls that the origin's discovery is over; they take it over when its claim expires",
						"origin", op.origin, "err", err)
				}
			} else {
				c.Abandon()
			}
			return
		}
		seen = phase
		switch phase {
		case PhaseReleased:
			op.pushStarts(false)
			op.release()
		case PhaseDone:
			op.pushStarts(false)
			return
		}
	}
}

// pushStarts queues the origin's start URLs, once. asHolder says that this crawl claimed the
// origin's discovery: the start URLs it queued are then the start pages it waits for.
func (op *originPlan) pushStarts(asHolder bool) {
	if op.pushed {
		return
	}
	op.pushed = true
	for _, s := range op.startURLs {
		if err := op.queueStart(s, asHolder); err != nil {
			op.p.log.Warn("plan: the frontier refused a start URL", "url", s, "err", err)
		}
	}
}

// releaseClaim tells the other crawls, when this one holds the origin's discovery, that its
// pages may go.
func (op *originPlan) releaseClaim(ctx context.Context) {
	if op.claim == nil {
		return
	}
	if err := op.claim.Release(ctx); err != nil && ctx.Err() == nil {
		op.p.log.Warn("plan: could not tell the other crawls that the origin's pages may go; they take its discovery over when the claim expires",
			"origin", op.origin, "err", err)
	}
}
