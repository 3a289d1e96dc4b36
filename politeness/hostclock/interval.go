// How far apart the starts to an origin are: the rate's spacing with its margins, the one
// formula every clock (this package's Local, a clock shared through a store) and the frontier's
// hint use.

package hostclock

import (
	"cmp"
	"math"
	"time"
)

// Interval returns the spacing between consecutive starts to an origin whose rate is rate
// starts per second (after any 429 penalty): the stricter of
//
//   - 1/rate lengthened by Margin (4 % by default), and
//   - (1 s lengthened by Margin, + JitterMargin) / ceil(rate): any ceil(rate)+1 consecutive
//     starts span at least 1.04 s + JitterMargin, so a server's log holds at most ceil(rate)
//     starts in any one second when the way to it delays a request by up to JitterMargin — and
//     Margin still covers what the jitter margin does not: this machine's own delay between
//     recording a start and the request reaching the wire.
//
// At the default 3 per second that is (1.04 s + 100 ms)/3 = 380 ms (2.63 starts/s); at 1 per
// second 1.14 s; at 0.5 per second 2.08 s (the relative margin is the stricter). Zero fields of cfg mean their
// defaults, so Config{}.Interval(r) is the default spacing; cfg need not be [Config.Resolved].
// A rate that is not positive gets the spacing of the longest Crawl-delay the clock honours
// (DefaultMaxFloor), never a division by zero.
//
// A clock kept outside this package must space its starts with this function so that it applies
// the same rule with the same numbers.
func (cfg Config) Interval(rate float64) time.Duration {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return cmp.Or(cfg.MaxFloor, DefaultMaxFloor)
	}
	margin := cmp.Or(cfg.Margin, DefaultMargin)
	jitter := cmp.Or(cfg.JitterMargin, DefaultJitterMargin)
	relative := time.Duration(float64(time.Duration(float64(time.Second)/rate)) * (1 + margin))
	// Rounded up, so that ceil(rate) intervals are never a nanosecond short of 1 s + jitter.
	shared := time.Duration(math.Ceil((float64(time.Second)*(1+margin) + float64(jitter)) / math.Ceil(rate)))
	return max(relative, shared)
}

// floorInterval returns the spacing a Crawl-delay floor asks for, with the stricter of the two
// margins: the delay is a minimum gap by definition (robots.txt's Crawl-delay), so the jitter on
// the way to the server's log must not shrink it.
func (cfg Config) floorInterval(floor time.Duration) time.Duration {
	if floor <= 0 {
		return 0
	}
	return max(time.Duration(float64(floor)*(1+cfg.Margin)), floor+cfg.JitterMargin)
}

// FloorInterval returns the spacing a Crawl-delay of floor asks for (see floorInterval), for a
// clock kept outside this package, which must apply it with the same numbers. Zero fields of cfg
// mean their defaults, as for [Config.Interval].
func (cfg Config) FloorInterval(floor time.Duration) time.Duration {
	cfg.Margin = cmp.Or(cfg.Margin, DefaultMargin)
	cfg.JitterMargin = cmp.Or(cfg.JitterMargin, DefaultJitterMargin)
	return cfg.floorInterval(floor)
}

// Window returns how long k consecutive starts at rate take at least in the window rule (see
// window), for a clock kept outside this package. Zero fields of cfg mean their defaults.
func (cfg Config) Window(k int, rate float64) time.Duration { return cfg.window(k, rate) }

// window returns how long k consecutive starts at rate take at least in the window rule (see
// [Local]): k whole intervals ([Config.Interval]), so that however the schedule catches up after
// a late start, ceil(rate)+1 starts never span less than 1 s + JitterMargin — the promise the
// jitter margin makes is about every run of starts, not only about starts on schedule (with half
// the margin here, four starts at 3/s could span 1.05 s, and a path adding 100 ms to the first
// put four arrivals in 0.95 s). cfg must be resolved.
func (cfg Config) window(k int, rate float64) time.Duration {
	return time.Duration(k) * cfg.Interval(rate)
}
