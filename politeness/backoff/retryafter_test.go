package backoff

import (
	"errors"
	"math"
	"testing"
	"time"
)

// now has a fraction of a second, as a real clock does: an HTTP-date has one-second resolution.
var now = time.Date(2026, time.November, 30, 1, 0, 0, 500_000_000, time.UTC)

func TestParseRetryAfter(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  time.Duration
		err   error
	}{
		// RFC 9110 §10.2.3: Retry-After = HTTP-date / delay-seconds.
		{"delta seconds", "120", 120 * time.Second, nil},
		{"zero delta", "0", 0, nil},
		{"leading zeros", "007", 7 * time.Second, nil},
		{"surrounding whitespace", " \t30 ", 30 * time.Second, nil},
		{"delta at the ceiling", "86400", 24 * time.Hour, nil},
		{"delta beyond the ceiling", "86401", 86401 * time.Second, ErrBeyondCeiling},
		{"delta overflowing", "99999999999999999999999", math.MaxInt64, ErrBeyondCeiling},
		// RFC 9110 §5.6.7: the three date forms.
		{"IMF-fixdate", "Mon, 30 Nov 2026 01:00:05 GMT", 4500 * time.Millisecond, nil},
		{"RFC 850 date", "Monday, 30-Nov-26 01:00:05 GMT", 4500 * time.Millisecond, nil},
		{"asctime date", "Mon Nov 30 01:00:05 2026", 4500 * time.Millisecond, nil},
		{"asctime, one-digit day", "Wed Dec  2 01:00:00 2026", 47*time.Hour + 59*time.Minute + 59500*time.Millisecond, ErrBeyondCeiling},
		{"date in the same second", "Mon, 30 Nov 2026 01:00:00 GMT", 0, ErrPast},
		{"date in the past", "Sun, 06 Nov 1994 08:49:37 GMT", 0, ErrPast},
		{"RFC 850 in the past", "Sunday, 06-Nov-94 08:49:37 GMT", 0, ErrPast},
		{"date a year ahead", "Tue, 30 Nov 2027 01:00:00 GMT", 365*24*time.Hour - 500*time.Millisecond, ErrBeyondCeiling},
		// Broken values fall back to backoff.
		{"empty", "", 0, ErrMalformed},
		{"blank", "   ", 0, ErrMalformed},
		{"negative", "-5", 0, ErrMalformed},
		{"plus sign", "+5", 0, ErrMalformed},
		{"fraction", "1.5", 0, ErrMalformed},
		{"unit", "5s", 0, ErrMalformed},
		{"words", "soon", 0, ErrMalformed},
		{"hex", "0x10", 0, ErrMalformed},
		{"two numbers", "1 2", 0, ErrMalformed},
		{"date in another zone", "Mon, 30 Nov 2026 01:00:05 PST", 0, ErrMalformed},
		{"date with an offset", "Mon, 30 Nov 2026 01:00:05 +0000", 0, ErrMalformed},
		{"ISO 8601 date", "2026-11-30T01:00:05Z", 0, ErrMalformed},
		{"impossible date", "Mon, 31 Nov 2026 01:00:05 GMT", 0, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRetryAfter(tt.value, now)
			if !errors.Is(err, tt.err) {
				t.Fatalf("ParseRetryAfter(%q) error = %v, want %v", tt.value, err, tt.err)
			}
			if err != nil {
				var rae *RetryAfterError
				if !errors.As(err, &rae) || rae.Value != tt.value {
					t.Fatalf("ParseRetryAfter(%q) error %v is not a *RetryAfterError for the value", tt.value, err)
				}
			}
			if got != tt.want {
				t.Errorf("ParseRetryAfter(%q) = %v, want %v", tt.value, got, tt.want)
			}
		})
	}
}

// FuzzParseRetryAfter: whatever a server sends, the parser returns either a usable delay within the
// ceiling and no error, or a typed error — never a panic, never a negative delay.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "0", "-1", "99999999999999999999", "Mon, 30 Nov 2026 01:00:05 GMT",
		"Monday, 30-Nov-26 01:00:05 GMT", "Mon Nov 30 01:00:05 2026", "soon", " 5 ", ",GMT", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d, err := ParseRetryAfter(v, now)
		if d < 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v, negative", v, d)
		}
		if err == nil {
			if d > MaxRetryAfter {
				t.Fatalf("ParseRetryAfter(%q) = %v beyond the ceiling without ErrBeyondCeiling", v, d)
			}
			return
		}
		var rae *RetryAfterError
		if !errors.As(err, &rae) {
			t.Fatalf("ParseRetryAfter(%q): untyped error %v", v, err)
		}
		switch {
		case errors.Is(err, ErrBeyondCeiling):
			if d <= MaxRetryAfter {
				t.Fatalf("ParseRetryAfter(%q) = %v with ErrBeyondCeiling", v, d)
			}
		case errors.Is(err, ErrMalformed), errors.Is(err, ErrPast):
			if d != 0 {
				t.Fatalf("ParseRetryAfter(%q) = %v with %v", v, d, err)
			}
		default:
			t.Fatalf("ParseRetryAfter(%q): unexpected error %v", v, err)
		}
		if rae.Error() == "" {
			t.Fatal("empty error text")
		}
	})
}
