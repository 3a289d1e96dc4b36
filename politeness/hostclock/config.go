// Which configurations a Local clock accepts, and what each zero value means.

package hostclock

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/url"
	"time"

	"github.com/politecrawl/etiquette/politeness/backoff"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// The budget of an origin, for every clock and every caller that sets one up (the door's Policy,
// the command line): these constants and [CheckRate] are the one home of the numbers and the rule.
const (
	// DefaultRate is the start rate per origin, per second, when none is configured, and the
	// highest rate an origin gets without its operator's authorisation (RRZE crawler rules; see
	// [CheckRate]). An untyped constant, so it serves int and float64 settings alike.
	DefaultRate = 3
	// DefaultConcurrency is the cap of requests in flight per origin when none is configured.
	DefaultConcurrency = 2
)

// Defaults and limits of [Config].
const (
	// DefaultMargin lengthens every interval by 4 %: a low rate (below one start a second) and
	// a long Crawl-delay keep a margin proportional to their spacing, where the jitter margin
	// alone would be a small fraction of it.
	DefaultMargin = 0.04
	// DefaultJitterMargin is the jitter the schedule leaves room for between the client and the
	// server's log: any K+1 consecutive starts at a rate of K per second span at least 1.04 s
	// (1 s with the 4 % margin) plus this margin, so the log holds at most K in any one second
	// even when the way there delays one request by up to 100 ms relative to the others. At 3
	// starts per second the spacing is (1.04 s + 100 ms)/3 = 380 ms, a mean of 2.63 starts per
	// second; see [Config.Interval].
	DefaultJitterMargin = 100 * time.Millisecond
	// DefaultMaxFloor caps the Crawl-delay floor (peers cap between 30 s and 300 s): a robots.txt
	// asking for an hour between requests gets one a minute, and the cap is logged.
	DefaultMaxFloor = time.Minute
	// DefaultErrorBudget is the number of consecutive failures (429, 5xx, timeouts, connection
	// errors) after which an origin is given up for the crawl.
	DefaultErrorBudget = 8
	// DefaultRecoverAfter is the run of consecutive successes after which a rate lowered by a 429
	// steps back up by a quarter (never above the configured rate).
	DefaultRecoverAfter = 10
	// DefaultLeaseTTL is how long a lease holds its place when Done is never called.
	DefaultLeaseTTL = 10 * time.Minute
)

// CheckRate returns nil when rate starts per second may be used for an origin whose operator
// authorised authorized starts per second (0 when no one authorised anything): rate must be
// positive and at most DefaultRate, or at most authorized when that is higher. The RRZE crawler
// rules require the operator's authorisation for more than 3 requests per second. Otherwise it
// returns a *[RateError], which names no setting: wrap it with the caller's own (Config.Rate,
// a policy field, a flag) and how to list an authorised origin there.
func CheckRate(rate, authorized float64) error {
	limit := max(float64(DefaultRate), authorized)
	if rate > 0 && rate <= limit {
		return nil
	}
	return &RateError{Rate: rate, Limit: limit}
}

// RateError is a rate [CheckRate] refused.
type RateError struct {
	Rate  float64 // the rate asked for, in starts per second per origin
	Limit float64 // the most the origin may get: DefaultRate, or its operator's authorised rate when higher
}

func (e *RateError) Error() string {
	switch {
	case !(e.Rate > 0):
		return fmt.Sprintf("a rate of %g starts per second is not positive", e.Rate)
	case e.Limit > DefaultRate:
		return fmt.Sprintf("a rate of %g starts per second exceeds the %g the origin's operator authorised", e.Rate, e.Limit)
	}
	return fmt.Sprintf("a rate of %g starts per second exceeds %d; the RRZE crawler rules require the operator's "+
		"authorisation for more", e.Rate, DefaultRate)
}

// Config configures a [Local] clock. The zero value is the default: 3 starts per second per
// origin, 2 in flight, default backoff, real time.
type Config struct {
	// Rate is the start rate per origin, per second. 0 means DefaultRate; a value above it is
	// refused (see [CheckRate]): list the origin in Authorized instead.
	Rate float64
	// Authorized maps budget keys ("host" or "host:port") to a rate the origin's operator has
	// authorised, which may exceed DefaultRate. The RRZE crawler rules require that authorisation
	// for anything faster than 3 requests per second.
	Authorized map[string]float64
	// Rates maps budget keys to a rate lower than the one they would otherwise get.
	Rates map[string]float64
	// Concurrency is the in-flight cap per origin; 0 means DefaultConcurrency.
	Concurrency int
	// Margin lengthens every interval by this fraction; 0 means DefaultMargin. Must be below 1.
	// The stricter of it and JitterMargin spaces the starts (see [Config.Interval]).
	Margin float64
	// JitterMargin is the jitter between the client and the server's log the schedule absorbs:
	// K+1 consecutive starts at a rate of K per second span at least 1 s plus JitterMargin, and
	// consecutive starts under a Crawl-delay at least the delay plus JitterMargin. 0 means
	// DefaultJitterMargin; it must lie in [0, 1 s].
	JitterMargin time.Duration
	// MaxFloor caps the Crawl-delay floor; 0 means DefaultMaxFloor.
	MaxFloor time.Duration
	// MaxRetryAfter is the longest Retry-After honoured by waiting; a longer one gives the origin
	// up for the crawl. 0 means backoff.MaxRetryAfter (24 h).
	MaxRetryAfter time.Duration
	// ErrorBudget is the number of consecutive failures after which an origin is given up;
	// 0 means DefaultErrorBudget.
	ErrorBudget int
	// RecoverAfter is the run of successes after which a lowered rate steps up; 0 means
	// DefaultRecoverAfter.
	RecoverAfter int
	// Backoff decides the pause after a failure without a usable Retry-After; nil means
	// backoff.DefaultPolicy.
	Backoff backoff.Policy
	// LeaseTTL is how long a lease holds its place without Done; 0 means DefaultLeaseTTL. It should
	// exceed the longest request (the door's Timeout covers reading the body).
	LeaseTTL time.Duration
	// LatencyFactor spaces the starts to an origin by at least this many times its smoothed
	// response time (from Lease.Sent to Lease.Done: through Layer, until the body is read or
	// closed, so a caller that keeps a body open counts as a slow answer), capped at MaxFloor,
	// when that is longer than the rate's interval: a server that slows down is asked less
	// often, and gets its budget back as it speeds up again — never more. 0 means
	// DefaultLatencyFactor; a negative value turns it off.
	LatencyFactor float64
	// ForgetAfter is how long an origin goes unused before the clock may forget it, once nothing
	// about it can hold back a start any more (see [Local]); 0 means DefaultForgetAfter, a
	// negative value keeps every origin for the life of the clock.
	ForgetAfter time.Duration
	// Time is the clock read and waited on; nil means the system's.
	Time Time
	// Rand returns uniform values in [0, 1) for the backoff jitter; nil means math/rand/v2.
	Rand func() float64
	// Logger receives every wait (Debug), pause (Info) and give-up (Warn); nil means warnings and
	// errors only, on slog.Default().
	Logger *slog.Logger
}

func validate(cfg *Config) error {
	if cfg.Rate < 0 {
		return fmt.Errorf("hostclock: Config.Rate %g is negative; use 0 for the default of %d starts per second", cfg.Rate, DefaultRate)
	}
	if cfg.Rate > 0 {
		if err := CheckRate(cfg.Rate, 0); err != nil {
			return fmt.Errorf("hostclock: Config.Rate: %w: list the origins whose operators allowed more, with their rates, in Config.Authorized", err)
		}
	}
	if math.IsNaN(cfg.LatencyFactor) || math.IsInf(cfg.LatencyFactor, 0) {
		return fmt.Errorf("hostclock: Config.LatencyFactor %g is not a number; use 0 for the default of %d, or -1 to turn it off", cfg.LatencyFactor, DefaultLatencyFactor)
	}
	if cfg.Concurrency < 0 {
		return fmt.Errorf("hostclock: Config.Concurrency %d is negative; use 0 for the default of %d", cfg.Concurrency, DefaultConcurrency)
	}
	if cfg.Margin < 0 || cfg.Margin >= 1 {
		return fmt.Errorf("hostclock: Config.Margin %g is outside [0, 1); use 0 for the default of %g", cfg.Margin, DefaultMargin)
	}
	if cfg.JitterMargin < 0 || cfg.JitterMargin > time.Second {
		return fmt.Errorf("hostclock: Config.JitterMargin %v is outside [0, 1s]; use 0 for the default of %v", cfg.JitterMargin, DefaultJitterMargin)
	}
	auth, err := normalizeRates("Authorized", cfg.Authorized)
	if err != nil {
		return err
	}
	rates, err := normalizeRates("Rates", cfg.Rates)
	if err != nil {
		return err
	}
	limit := cmp.Or(cfg.Rate, DefaultRate)
	for k, r := range rates {
		if err := CheckRate(r, auth[k]); err != nil {
			return fmt.Errorf("hostclock: Config.Rates[%q]: %w: list the origin with the rate its operator allowed in Config.Authorized", k, err)
		}
		otherwise := limit
		if a, ok := auth[k]; ok {
			otherwise = max(a, limit)
		}
		if r > otherwise {
			return fmt.Errorf("hostclock: Config.Rates[%q] = %g exceeds the %g starts per second this origin gets otherwise; "+
				"Config.Rates only lowers an origin's rate", k, r, otherwise)
		}
	}
	cfg.Authorized, cfg.Rates = auth, rates
	return nil
}

// normalizeRates turns user-written keys ("Example.org:443") into budget keys ("example.org").
func normalizeRates(field string, m map[string]float64) (map[string]float64, error) {
	out := make(map[string]float64, len(m))
	for k, r := range m {
		u, err := url.Parse("http://" + k)
		var key string
		if err == nil && u.Path == "" && u.User == nil {
			key, err = origin.BudgetKey(u)
		} else if err == nil {
			err = errors.New("not a host or host:port")
		}
		if err != nil {
			return nil, fmt.Errorf("hostclock: Config.%s key %q is not a budget key (\"host\" or \"host:port\"): %v", field, k, err)
		}
		if !(r > 0) {
			return nil, fmt.Errorf("hostclock: Config.%s[%q] = %g; a rate must be positive", field, k, r)
		}
		out[key] = r
	}
	return out, nil
}

// Resolved validates cfg as [NewLocal] does and returns it with every zero field set to its
// default: what a [Clock] kept outside this package (one shared through Redis) starts from, so
// that it applies the same rules with the same numbers.
func (cfg Config) Resolved() (Config, error) {
	if err := validate(&cfg); err != nil {
		return Config{}, err
	}
	return defaults(cfg), nil
}

// RateFor returns the start rate cfg gives the budget key: the origin's authorised rate when it
// has one, else Rate, lowered by Rates. cfg must be [Config.Resolved].
func (cfg Config) RateFor(key string) float64 {
	rate := cfg.Rate
	if a, ok := cfg.Authorized[key]; ok {
		rate = a
	}
	if r, ok := cfg.Rates[key]; ok {
		rate = min(rate, r)
	}
	return rate
}

func defaults(cfg Config) Config {
	cfg.Rate = cmp.Or(cfg.Rate, DefaultRate)
	cfg.Concurrency = cmp.Or(cfg.Concurrency, DefaultConcurrency)
	cfg.Margin = cmp.Or(cfg.Margin, DefaultMargin)
	cfg.JitterMargin = cmp.Or(cfg.JitterMargin, DefaultJitterMargin)
	cfg.MaxFloor = cmp.Or(cfg.MaxFloor, DefaultMaxFloor)
	cfg.MaxRetryAfter = cmp.Or(cfg.MaxRetryAfter, backoff.MaxRetryAfter)
	cfg.ErrorBudget = cmp.Or(cfg.ErrorBudget, DefaultErrorBudget)
	cfg.RecoverAfter = cmp.Or(cfg.RecoverAfter, DefaultRecoverAfter)
	cfg.LeaseTTL = cmp.Or(cfg.LeaseTTL, DefaultLeaseTTL)
	cfg.LatencyFactor = cmp.Or(cfg.LatencyFactor, DefaultLatencyFactor)
	cfg.ForgetAfter = cmp.Or(cfg.ForgetAfter, DefaultForgetAfter)
	if cfg.Backoff == nil {
		cfg.Backoff = backoff.DefaultPolicy
	}
	if cfg.Time == nil {
		cfg.Time = systemTime{}
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	return cfg
}
