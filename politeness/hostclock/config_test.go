package hostclock

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// CheckRate is the one home of the rule "more than 3 starts per second needs the operator's
// authorisation" (RRZE crawler rules).
func TestCheckRate(t *testing.T) {
	tests := []struct {
		name       string
		rate, auth float64
		limit      float64 // the RateError's Limit; 0 when the rate is allowed
		want       string  // in the error
	}{
		{"the default", DefaultRate, 0, 0, ""},
		{"below the default", 0.5, 0, 0, ""},
		{"just above the default", 3.01, 0, 3, "authorisation"},
		{"far above the default", 100, 0, 3, "authorisation"},
		{"authorised higher", 10, 10, 0, ""},
		{"above the authorised rate", 11, 10, 10, "the 10 the origin's operator authorised"},
		{"an authorisation below the default does not lower it", 3, 2, 0, ""},
		{"zero", 0, 0, 3, "not positive"},
		{"negative", -1, 10, 10, "not positive"},
		{"not a number", math.NaN(), 0, 3, "not positive"},
		{"infinite", math.Inf(1), 0, 3, "authorisation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckRate(tt.rate, tt.auth)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("CheckRate(%g, %g) = %v, want nil", tt.rate, tt.auth, err)
				}
				return
			}
			var re *RateError
			if !errors.As(err, &re) || re.Limit != tt.limit || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("CheckRate(%g, %g) = %#v (%v), want a *RateError with Limit %g mentioning %q", tt.rate, tt.auth, err, err, tt.limit, tt.want)
			}
		})
	}
}

// NewLocal's refusals of a rate are CheckRate's, findable with errors.As.
func TestConfigRefusalsCarryTheRateError(t *testing.T) {
	for _, cfg := range []Config{{Rate: 4}, {Rates: map[string]float64{"a.example": 5}}} {
		_, err := NewLocal(cfg)
		var re *RateError
		if !errors.As(err, &re) || re.Limit != DefaultRate {
			t.Errorf("NewLocal(%+v) = %v, want a wrapped *RateError", cfg, err)
		}
	}
}

func TestConfigRefusals(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // in the error; "" for no error
	}{
		{"default", Config{}, ""},
		{"rate 3 is allowed", Config{Rate: 3}, ""},
		{"rate above 3 needs authorisation", Config{Rate: 4}, "Config.Authorized"},
		{"negative rate", Config{Rate: -1}, "negative"},
		{"per-origin rate above 3 needs authorisation", Config{Rates: map[string]float64{"a.example": 5}}, "authorisation"},
		{"authorised origin may be given a higher per-origin rate", Config{Authorized: map[string]float64{"a.example": 10}, Rates: map[string]float64{"a.example": 8}}, ""},
		{"authorised 10 does not allow 20", Config{Authorized: map[string]float64{"a.example": 10}, Rates: map[string]float64{"a.example": 20}}, "exceeds"},
		{"authorisation is per origin", Config{Authorized: map[string]float64{"b.example": 10}, Rates: map[string]float64{"a.example": 5}}, "authorisation"},
		{"zero authorised rate", Config{Authorized: map[string]float64{"a.example": 0}}, "positive"},
		{"key with a path", Config{Authorized: map[string]float64{"a.example/x": 10}}, "not a budget key"},
		{"key with a scheme", Config{Authorized: map[string]float64{"https://a.example": 10}}, "not a budget key"},
		{"empty key", Config{Rates: map[string]float64{"": 1}}, "not a budget key"},
		{"negative concurrency", Config{Concurrency: -1}, "Concurrency"},
		{"margin of 1", Config{Margin: 1}, "Margin"},
		{"negative jitter margin", Config{JitterMargin: -time.Millisecond}, "Config.JitterMargin"},
		{"jitter margin above a second", Config{JitterMargin: 2 * time.Second}, "Config.JitterMargin"},
		{"a lower global rate caps the per-origin rates", Config{Rate: 1, Rates: map[string]float64{"a.example": 2}}, "only lowers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewLocal(tt.cfg)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("NewLocal: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("NewLocal error = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}
