package backoff

// This file decides what a Retry-After value means (RFC 9110 §10.2.3).

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxRetryAfter is the longest Retry-After the door honours by waiting. A longer one (StormCrawler
// uses the same 24 h) is not worth waiting for inside one crawl: the host clock gives the origin up
// for the crawl's remainder and reports it, rather than hammering it or silently waiting a day.
const MaxRetryAfter = 24 * time.Hour

// Errors ParseRetryAfter wraps in a [*RetryAfterError]; test with errors.Is.
var (
	// ErrMalformed: the value is neither delta-seconds nor an HTTP-date (this includes negative
	// numbers and fractions, which the grammar does not allow).
	ErrMalformed = errors.New("neither delta-seconds nor an HTTP-date")
	// ErrPast: the HTTP-date is not after now.
	ErrPast = errors.New("the date is not in the future")
	// ErrBeyondCeiling: the value is valid but longer than MaxRetryAfter.
	ErrBeyondCeiling = errors.New("longer than the 24 h ceiling")
)

// RetryAfterError says why a Retry-After value cannot be used as it stands.
type RetryAfterError struct {
	Value string        // the header value as received
	Err   error         // ErrMalformed, ErrPast or ErrBeyondCeiling
	Delay time.Duration // for ErrBeyondCeiling: the delay the value names (capped at the largest Duration)
}

func (e *RetryAfterError) Error() string {
	switch e.Err {
	case ErrBeyondCeiling:
		return fmt.Sprintf("Retry-After %q asks for %s, %v: the origin is given up for this crawl", e.Value, e.Delay, e.Err)
	default:
		return fmt.Sprintf("Retry-After %q: %v (RFC 9110 §10.2.3); falling back to exponential backoff", e.Value, e.Err)
	}
}

func (e *RetryAfterError) Unwrap() error { return e.Err }

// ParseRetryAfter returns how long after now a response's Retry-After value asks the client to
// wait (RFC 9110 §10.2.3): either delta-seconds ("120") or an HTTP-date in any of the three forms
// of RFC 9110 §5.6.7 — IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), the obsolete RFC 850 form
// ("Sunday, 06-Nov-94 08:49:37 GMT") and asctime ("Sun Nov  6 08:49:37 1994"). Surrounding
// whitespace is ignored.
//
// A value that cannot be used returns a [*RetryAfterError]: [ErrMalformed] for garbage, an empty
// value or a negative number, [ErrPast] for a date not after now; the caller falls back to its
// backoff policy. A valid value longer than [MaxRetryAfter] returns the delay it names together
// with [ErrBeyondCeiling]. "0" is valid and returns 0.
func ParseRetryAfter(value string, now time.Time) (time.Duration, error) {
	v := strings.Trim(value, " \t")
	if v == "" {
		return 0, &RetryAfterError{Value: value, Err: ErrMalformed}
	}
	if allDigits(v) {
		secs, err := strconv.ParseUint(v, 10, 64)
		// Only overflow can fail here; such a value is a valid, absurdly long delay.
		if err != nil || secs > uint64(math.MaxInt64/int64(time.Second)) {
			return math.MaxInt64, &RetryAfterError{Value: value, Err: ErrBeyondCeiling, Delay: math.MaxInt64}
		}
		return checkCeiling(value, time.Duration(secs)*time.Second)
	}
	// IMF-fixdate and the RFC 850 form name their zone, which RFC 9110 §5.6.7 fixes to GMT;
	// time.Parse would accept any abbreviation (and read an unknown one as UTC), so insist on it.
	if strings.Contains(v, ",") && !strings.HasSuffix(v, " GMT") {
		return 0, &RetryAfterError{Value: value, Err: ErrMalformed}
	}
	// net/http already implements the three date forms; its two-digit RFC 850 years follow Go's
	// 1969–2068 window rather than RFC 9110's "50 years" rule, which only differs for dates that
	// are either long past or far beyond the ceiling — both refused anyway.
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, &RetryAfterError{Value: value, Err: ErrMalformed}
	}
	if !t.After(now) {
		return 0, &RetryAfterError{Value: value, Err: ErrPast}
	}
	return checkCeiling(value, t.Sub(now))
}

func checkCeiling(value string, d time.Duration) (time.Duration, error) {
	if d > MaxRetryAfter {
		return d, &RetryAfterError{Value: value, Err: ErrBeyondCeiling, Delay: d}
	}
	return d, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
