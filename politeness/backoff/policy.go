package backoff

// This file decides how long an origin pauses after a failure that names no Retry-After.

import (
	"math"
	"time"
)

// Class says what kind of failure an origin answered with; the policy pauses differently for each.
type Class int

const (
	// Throttled: 429 Too Many Requests or 503 Service Unavailable without a usable Retry-After —
	// the site says it is overloaded.
	Throttled Class = iota + 1
	// Transient: another 5xx, a timeout or a connection error — something went wrong, but the site
	// did not ask us to slow down, so the pause is milder.
	Transient
)

func (c Class) String() string {
	switch c {
	case Throttled:
		return "throttled"
	case Transient:
		return "transient"
	}
	return "unknown"
}

// Policy returns how long an origin pauses after its n-th consecutive failure (n ≥ 1) of class c.
// rnd returns a uniformly distributed value in [0, 1); a policy draws its jitter from it so that
// tests can fix it. A Policy is a replaceable value, as in go-retryablehttp: set
// hostclock.Config.Backoff to your own function to change the decision.
type Policy func(c Class, n int, rnd func() float64) time.Duration

// Exponential is a capped exponential backoff with upward jitter: the n-th failure waits
// Base×Factor^(n−1), capped at Ceiling, and then lengthened by a random fraction of up to Jitter
// of itself. The jitter only ever adds, so no pause is shorter than Base, and origins that failed
// together do not all come back in the same instant. The zero value waits nothing.
type Exponential struct {
	Base    time.Duration
	Factor  float64
	Ceiling time.Duration
	Jitter  float64
}

// Delay returns the pause after the n-th consecutive failure; n < 1 counts as 1. The result lies
// in [d, d×(1+Jitter)) where d = min(Ceiling, Base×Factor^(n−1)).
func (e Exponential) Delay(n int, rnd func() float64) time.Duration {
	if n < 1 {
		n = 1
	}
	d := float64(e.Base) * math.Pow(math.Max(e.Factor, 1), float64(n-1))
	if c := float64(e.Ceiling); e.Ceiling > 0 && d > c {
		d = c
	}
	if e.Jitter > 0 && rnd != nil {
		d += d * e.Jitter * clamp01(rnd())
	}
	if d >= math.MaxInt64 || math.IsNaN(d) {
		return math.MaxInt64
	}
	return time.Duration(d)
}

func clamp01(f float64) float64 {
	if f < 0 || math.IsNaN(f) {
		return 0
	}
	if f >= 1 {
		return math.Nextafter(1, 0)
	}
	return f
}

// ThrottledBackoff is the default backoff after a 429 or 503 without a usable Retry-After: 2 s
// doubling to 5 minutes, plus up to 25 % jitter (the host clock also halves the rate after a 429).
func ThrottledBackoff() Exponential {
	return Exponential{Base: 2 * time.Second, Factor: 2, Ceiling: 5 * time.Minute, Jitter: 0.25}
}

// TransientBackoff is the default backoff after another 5xx, a timeout or a connection error:
// 1 s doubling to 1 minute, plus up to 25 % jitter — milder, because the site did not ask the
// crawler to slow down.
func TransientBackoff() Exponential {
	return Exponential{Base: time.Second, Factor: 2, Ceiling: time.Minute, Jitter: 0.25}
}

// DefaultPolicy applies [ThrottledBackoff] or [TransientBackoff] according to c.
func DefaultPolicy(c Class, n int, rnd func() float64) time.Duration {
	if c == Throttled {
		return ThrottledBackoff().Delay(n, rnd)
	}
	return TransientBackoff().Delay(n, rnd)
}
