package hostclock

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/kind"
)

// Four consecutive starts at one origin span at least one second plus the jitter margin, so the
// server's log holds at most three in any second when the way from the client to the log delays
// one of them by up to the margin relative to the others; the mean rate stays above 2.6 per second.
func TestFourStartsSpanASecondPlusTheJitterMargin(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		margin time.Duration
	}{
		{"default margin", Config{}, DefaultJitterMargin},
		{"a wider margin", Config{JitterMargin: 250 * time.Millisecond}, 250 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Concurrency, tt.cfg.LatencyFactor = 8, -1
			l, m := newTestLocal(t, tt.cfg)
			chans := []<-chan result{acquireAsync(l, context.Background(), "a.example", kind.HTML)}
			first := receive(t, chans[0])
			for range 12 {
				chans = append(chans, acquireAsync(l, context.Background(), "a.example", kind.HTML))
			}
			waitQueue(t, m, l, "a.example", 12)
			starts := []time.Time{first.lease.Grant().At}
			for _, ch := range chans[1:] {
				r := await(t, m, ch)
				if r.err != nil {
					t.Fatal(r.err)
				}
				starts = append(starts, r.lease.Grant().At)
				r.lease.Done(Outcome{Status: 200})
			}
			slices.SortFunc(starts, time.Time.Compare) // the requests joined the line in any order
			for i := 3; i < len(starts); i++ {
				if span := starts[i].Sub(starts[i-3]); span < time.Second+tt.margin {
					t.Fatalf("starts %d to %d spanned %v, want at least %v", i-3, i, span, time.Second+tt.margin)
				}
			}
			// The mean rate the margins leave is TestTheDefaultsLeaveAMeanRateOfAtLeast2_6's: here
			// await may move the simulated time past a timer a busy machine registers late, which
			// stretches the run but never shortens a span.
		})
	}
}

// The spacing a rate gets: the stricter of the relative margin and the jitter margin shared by
// the rate's whole starts of one second, so low rates and Crawl-delay floors are not slowed more
// than the margin asks, and every rate's K+1 consecutive starts span at least 1 s + the margin.
func TestIntervalForEachRate(t *testing.T) {
	tests := []struct {
		cfg  Config
		rate float64
		want time.Duration
	}{
		{Config{}, 3, 380 * time.Millisecond},        // (1.04 s + 100 ms)/3
		{Config{}, 1, 1140 * time.Millisecond},       // one start, 1.14 s apart
		{Config{}, 10, 114 * time.Millisecond},       // an authorised rate: ten starts span 1.14 s
		{Config{}, 2.5, 416 * time.Millisecond},      // 400 ms × 1.04 is stricter than 1.1 s / 3
		{Config{}, 0.5, 2080 * time.Millisecond},     // 2 s × 1.04: no extra slowdown
		{Config{}, 1.5, 693333332 * time.Nanosecond}, // 3/s halved by a 429: 667 ms × 1.04 > 1.1 s / 2
		{Config{JitterMargin: 500 * time.Millisecond}, 3, 513333334 * time.Nanosecond},
	}
	for _, tt := range tests {
		if got := tt.cfg.Interval(tt.rate); got != tt.want {
			t.Errorf("Config{JitterMargin: %v}.Interval(%g) = %v, want %v", tt.cfg.JitterMargin, tt.rate, got, tt.want)
		}
	}
}

// A Crawl-delay is a minimum gap, so the jitter margin is added to it (or the relative margin,
// when that is more): consecutive starts under a 2 s delay are 2.1 s apart, under 5 s 5.2 s.
func TestCrawlDelayKeepsTheJitterMargin(t *testing.T) {
	for _, tt := range []struct{ floor, want time.Duration }{
		{2 * time.Second, 2100 * time.Millisecond},
		{5 * time.Second, 5200 * time.Millisecond},
	} {
		l, m := newTestLocal(t, Config{})
		l.SetFloor("a.example", botSource, tt.floor)
		first := acquire(t, m, l, "a.example")
		first.Done(Outcome{Status: 200})
		if gap := acquire(t, m, l, "a.example").Grant().At.Sub(first.Grant().At); gap != tt.want {
			t.Errorf("Crawl-delay %v: consecutive starts %v apart, want %v", tt.floor, gap, tt.want)
		}
	}
}

// The default margins cost the budget little: four starts span 1.14 s, and the mean rate at the
// default 3 per second stays at 2.6 starts per second or more.
func TestTheDefaultsLeaveAMeanRateOfAtLeast2_6(t *testing.T) {
	iv := Config{}.Interval(DefaultRate)
	if rate := float64(time.Second) / float64(iv); rate < 2.6 {
		t.Errorf("the default spacing %v leaves %.3f starts per second, want at least 2.6", iv, rate)
	}
	if span := 3 * iv; span < time.Second+DefaultJitterMargin {
		t.Errorf("four starts span %v, want at least 1 s + the jitter margin", span)
	}
}
