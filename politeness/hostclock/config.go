// Which configurations a Local clock accepts, and what each zero value means.

package hostclock

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"time"

	"github.com/politecrawl/etiquette/politeness/backoff"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// Defaults and limits of [Config].
const (
	// DefaultRate is the start rate per origin when Config.Rate is 0, and the highest rate any
	// origin gets without being listed in Config.Authorized (RRZE crawler rules).
	DefaultRate = 3.0
	// DefaultConcurrency is the in-flight cap per origin when Config.Concurrency is 0.
	DefaultConcurrency = 2
	// DefaultMargin lengthens every interval by 4 %: at 3 starts per second the spacing is
	// 347 ms instead of 333 ms, so three consecutive starts span 1.04 s and any one second window
	// still holds at most three of them when an arrival is delayed by up to 40 ms on the way.
	DefaultMargin = 0.04
	// DefaultMaxFloor caps the Crawl-delay floor (peers cap between 30 s and 300 s): a robots.txt
	// asking for an hour between requests gets one a minute, and the cap is logged.
	DefaultMaxFloor = time.Minute
	// DefaultErrorBudget is the number of consecutive failures (429, 5xx, timeouts, connection
	// errors) after which an origin is given up for the crawl.
	DefaultErrorBudget = 8
	// DefaultRecoverAfter is the run of consecutive successes after which a rate lowered by a 429
	// steps back up by RecoverStep (never above the configured rate).
	DefaultRecoverAfter = 10
	// DefaultLeaseTTL is how long a lease holds its place when Done is never called.
	DefaultLeaseTTL = 10 * time.Minute
)

// Config configures a [Local] clock. The zero value is the default: 3 starts per second per
// origin, 2 in flight, default backoff, real time.
type Config struct {
	// Rate is the start rate per origin, per second. 0 means DefaultRate; a value above it is
	// refused: list the origin in Authorized instead.
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
	Margin float64
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
	// Time is the clock read and waited on; nil means System.
	Time Time
	// Rand returns uniform values in [0, 1) for the backoff jitter; nil means math/rand/v2.
	Rand func() float64
	// Logger receives every wait (Debug), pause (Info) and give-up (Warn); nil means slog.Default().
	Logger *slog.Logger
}

func validate(cfg *Config) error {
	if cfg.Rate < 0 || cfg.Rate > DefaultRate {
		return fmt.Errorf("hostclock: Config.Rate %g is outside (0, %g] starts per second; the RRZE crawler rules "+
			"require an operator's authorisation for more: list the origin with its rate in Config.Authorized", cfg.Rate, DefaultRate)
	}
	if cfg.Concurrency < 0 {
		return fmt.Errorf("hostclock: Config.Concurrency %d is negative; use 0 for the default of %d", cfg.Concurrency, DefaultConcurrency)
	}
	if cfg.Margin < 0 || cfg.Margin >= 1 {
		return fmt.Errorf("hostclock: Config.Margin %g is outside [0, 1); use 0 for the default of %g", cfg.Margin, DefaultMargin)
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
		allowed := limit
		if a, ok := auth[k]; ok {
			allowed = max(a, limit)
		}
		if r > allowed {
			return fmt.Errorf("hostclock: Config.Rates[%q] = %g exceeds the %g starts per second this origin may get; "+
				"the RRZE crawler rules require an operator's authorisation for more: list it in Config.Authorized", k, r, allowed)
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

func defaults(cfg Config) Config {
	cfg.Rate = cmp.Or(cfg.Rate, DefaultRate)
	cfg.Concurrency = cmp.Or(cfg.Concurrency, DefaultConcurrency)
	cfg.Margin = cmp.Or(cfg.Margin, DefaultMargin)
	cfg.MaxFloor = cmp.Or(cfg.MaxFloor, DefaultMaxFloor)
	cfg.MaxRetryAfter = cmp.Or(cfg.MaxRetryAfter, backoff.MaxRetryAfter)
	cfg.ErrorBudget = cmp.Or(cfg.ErrorBudget, DefaultErrorBudget)
	cfg.RecoverAfter = cmp.Or(cfg.RecoverAfter, DefaultRecoverAfter)
	cfg.LeaseTTL = cmp.Or(cfg.LeaseTTL, DefaultLeaseTTL)
	if cfg.Backoff == nil {
		cfg.Backoff = backoff.DefaultPolicy
	}
	if cfg.Time == nil {
		cfg.Time = System
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	return cfg
}
