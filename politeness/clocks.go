package politeness

// This file decides which host clocks a door's requests wait in.

import (
	"fmt"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
)

// clocks returns the clock that holds p's budget and, for a policy stricter than the default,
// a clock of the door's own that its requests pass as well:
//   - Policy.Clock when set;
//   - otherwise hostclock.Shared(), the one process-wide budget per origin, with p's
//     AuthorizedRates registered on it (an authorisation belongs to the origin, so every door
//     of the process may use it);
//   - plus, for a lower Rate or Concurrency, a clock of the door's own with those limits: a
//     request waits for both, so the stricter rule wins and the origin keeps one budget.
//
// A Concurrency above the default would widen every door's budget, so it needs an explicit
// Policy.Clock.
func (p Policy) clocks() (budget, stricter hostclock.Clock, err error) {
	if p.Clock != nil {
		return p.Clock, nil, nil
	}
	if err := hostclock.CheckRate(p.rate(), 0); err != nil {
		return nil, nil, fmt.Errorf("etiquette: Policy.Rate: %w; "+
			"the RRZE crawler rules require the operator's authorisation for more: list the host and its rate in Policy.AuthorizedRates", err)
	}
	if p.Concurrency > DefaultConcurrency {
		return nil, nil, fmt.Errorf("etiquette: Policy.Concurrency %d is above the process-wide %d in flight per host; "+
			"build a clock with hostclock.NewLocal(hostclock.Config{Concurrency: %d}) and pass it as Policy.Clock to every door of the process",
			p.Concurrency, DefaultConcurrency, p.Concurrency)
	}
	shared := hostclock.Shared()
	for key, rate := range p.AuthorizedRates {
		if err := shared.Authorize(key, rate); err != nil {
			return nil, nil, fmt.Errorf("etiquette: Policy.AuthorizedRates: %w", err)
		}
	}
	if p.rate() == DefaultRate && p.concurrency() == DefaultConcurrency && p.LatencyFactor <= hostclock.DefaultLatencyFactor {
		return shared, nil, nil
	}
	own, err := hostclock.NewLocal(hostclock.Config{Rate: p.rate(), Authorized: p.AuthorizedRates,
		Concurrency: p.concurrency(), LatencyFactor: max(p.LatencyFactor, hostclock.DefaultLatencyFactor), Logger: p.Logger})
	if err != nil {
		return nil, nil, fmt.Errorf("etiquette: %w", err)
	}
	return shared, own, nil
}

// withoutPauses drops Paused events and latency notices. A door's own stricter clock learns the
// same outcomes as the process-wide clock below it, which already reports every pause and
// slowdown.
type withoutPauses struct{ events.Sink }

func (w withoutPauses) Emit(e events.Event) {
	if e.Type != events.Paused && !(e.Type == events.Notice && e.Reason == hostclock.ReasonLatency) {
		w.Sink.Emit(e)
	}
}
