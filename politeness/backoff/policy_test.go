package backoff

import (
	"math"
	"testing"
	"time"
)

func fixed(f float64) func() float64 { return func() float64 { return f } }

func TestExponentialDelay(t *testing.T) {
	e := Exponential{Base: 2 * time.Second, Factor: 2, Ceiling: 30 * time.Second, Jitter: 0.25}
	tests := []struct {
		name string
		n    int
		rnd  float64
		want time.Duration
	}{
		{"first failure waits the base", 1, 0, 2 * time.Second},
		{"n below 1 counts as the first", 0, 0, 2 * time.Second},
		{"second doubles", 2, 0, 4 * time.Second},
		{"third doubles again", 3, 0, 8 * time.Second},
		{"fourth", 4, 0, 16 * time.Second},
		{"capped at the ceiling", 5, 0, 30 * time.Second},
		{"still capped far out", 1000, 0, 30 * time.Second},
		{"jitter only adds", 1, 0.5, 2250 * time.Millisecond},
		{"jitter at its largest stays below base×1.25", 1, 0.999999, 2*time.Second + 499999500*time.Nanosecond},
		{"jitter on the ceiling", 9, 0.5, 33750 * time.Millisecond},
		{"out-of-range randomness is clamped", 1, -3, 2 * time.Second},
		{"NaN randomness is clamped", 1, math.NaN(), 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := e.Delay(tt.n, fixed(tt.rnd)); got != tt.want {
				t.Errorf("Delay(%d, %v) = %v, want %v", tt.n, tt.rnd, got, tt.want)
			}
		})
	}
}

func TestExponentialDelayWithoutCeilingSaturates(t *testing.T) {
	e := Exponential{Base: time.Second, Factor: 10}
	if got := e.Delay(400, fixed(0)); got != math.MaxInt64 {
		t.Errorf("Delay(400) = %v, want the largest Duration", got)
	}
}

func TestDefaultPolicy(t *testing.T) {
	tests := []struct {
		class Class
		n     int
		want  time.Duration
	}{
		{Throttled, 1, 2 * time.Second},
		{Throttled, 2, 4 * time.Second},
		{Throttled, 9, 5 * time.Minute}, // 2 s × 2^8 = 512 s, capped
		{Transient, 1, time.Second},
		{Transient, 3, 4 * time.Second},
		{Transient, 8, time.Minute},
	}
	for _, tt := range tests {
		if got := DefaultPolicy(tt.class, tt.n, fixed(0)); got != tt.want {
			t.Errorf("DefaultPolicy(%v, %d) = %v, want %v", tt.class, tt.n, got, tt.want)
		}
	}
	// A transient failure is milder than a throttled one at every step.
	for n := 1; n <= 10; n++ {
		if tr, th := DefaultPolicy(Transient, n, fixed(0.99)), DefaultPolicy(Throttled, n, fixed(0)); tr >= th {
			t.Errorf("failure %d: transient %v is not milder than throttled %v", n, tr, th)
		}
	}
}
