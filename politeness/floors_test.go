package politeness

import (
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/hostclock"
)

func TestFloorBookHandsTheClockTheLargestDelay(t *testing.T) {
	clock, err := hostclock.NewLocal(hostclock.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	floor := func() time.Duration {
		for _, s := range clock.Stats() {
			if s.Origin == "h.example" {
				return s.Floor
			}
		}
		return 0
	}
	b := floorBookFor(clock)
	if floorBookFor(clock) != b {
		t.Fatal("one book per clock")
	}
	steps := []struct {
		source string
		delay  time.Duration
		want   time.Duration
	}{
		{"https://h.example ExampleBot", 10 * time.Second, 10 * time.Second},
		{"http://h.example ExampleBot", 2 * time.Second, 10 * time.Second},   // the other scheme's robots.txt asks less
		{"https://h.example ExampleBot-User", time.Second, 10 * time.Second}, // another door's token: the crawl's 10 s stand
		{"https://h.example ExampleBot", 0, 2 * time.Second},                 // the site dropped its Crawl-delay
		{"http://h.example ExampleBot", 0, time.Second},
		{"https://h.example ExampleBot-User", 0, 0},
	}
	for i, s := range steps {
		b.record(clock, "h.example", s.source, s.delay)
		if got := floor(); got != s.want {
			t.Fatalf("step %d (%s asks %v): floor %v, want %v", i, s.source, s.delay, got, s.want)
		}
	}
}

func TestFloorBookGoesWithItsClock(t *testing.T) {
	books := func() int {
		n := 0
		floorBooks.Range(func(any, any) bool { n++; return true })
		return n
	}
	before := books()
	for range 10 {
		clock, err := hostclock.NewLocal(hostclock.Config{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		floorBookFor(clock).record(clock, "h.example", "https://h.example ExampleBot", time.Second)
	}
	if books() < before+10 {
		t.Fatalf("%d books after 10 clocks, want at least %d", books(), before+10)
	}
	// The clocks are unreachable now; their books must go with them (cleanups run after a GC).
	deadline := time.Now().Add(5 * time.Second)
	for books() > before && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := books(); n > before {
		t.Errorf("%d books left for collected clocks", n-before)
	}
}
