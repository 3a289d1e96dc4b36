package hostclock

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// floorOf returns the Crawl-delay floor in force for key.
func floorOf(l *Local, key string) time.Duration {
	for _, s := range l.Stats() {
		if s.Origin == key {
			return s.Floor
		}
	}
	return 0
}

// Several robots.txt files and tokens share one budget key: the largest delay any of them asks
// for holds, and a delay a site drops stops counting.
func TestSetFloorKeepsTheLargestDelayOfEverySource(t *testing.T) {
	l, _ := newTestLocal(t, Config{MaxFloor: 30 * time.Second})
	steps := []struct {
		source string
		delay  time.Duration
		want   time.Duration
	}{
		{"https://h.example:443 ExampleBot", 10 * time.Second, 10 * time.Second},
		{"http://h.example:80 ExampleBot", 2 * time.Second, 10 * time.Second},                     // the other scheme's robots.txt asks less
		{"https://h.example:443 ExampleBot-User", time.Second, 10 * time.Second},                  // another door's token: the crawl's 10 s stand
		{"https://h.example:443 ExampleBot", 10 * time.Second, 10 * time.Second},                  // asked again: nothing changes
		{"https://h.example:443 ExampleBot", 0, 2 * time.Second},                                  // the site dropped its Crawl-delay
		{"https://h.example:443 ExampleBot", -time.Second, 2 * time.Second},                       // withdrawn twice: still gone
		{"http://h.example:80 ExampleBot", time.Hour, 30 * time.Second},                           // capped at Config.MaxFloor
		{"http://h.example:80 ExampleBot", 0, time.Second},                                        // the cap goes with its source
		{"https://h.example:443 ExampleBot-User", 0, 0},                                           // nothing left
		{"https://h.example:443 ExampleBot-User", 500 * time.Millisecond, 500 * time.Millisecond}, // a floor below the rate's interval is kept as asked
	}
	for i, s := range steps {
		l.SetFloor("h.example", s.source, s.delay)
		if got := floorOf(l, "h.example"); got != s.want {
			t.Fatalf("step %d (%s asks %v): floor %v, want %v", i, s.source, s.delay, got, s.want)
		}
	}
	if got := floorOf(l, "other.example"); got != 0 {
		t.Errorf("another origin's floor = %v, want none", got)
	}
}

// A robots.txt asking for more than the cap is logged when its delay changes, not on every
// request the robots gate decides.
func TestSetFloorLogsTheCapOnce(t *testing.T) {
	var log bytes.Buffer
	l, _ := newTestLocal(t, Config{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	for range 5 {
		l.SetFloor("h.example", botSource, 2*time.Hour)
	}
	if n := strings.Count(log.String(), "Crawl-delay capped"); n != 1 {
		t.Fatalf("%d cap records for one robots.txt asking 5 times:\n%s", n, log.String())
	}
	if !strings.Contains(log.String(), botSource) {
		t.Errorf("the cap record does not name the source: %s", log.String())
	}
}

func TestExplicitPauseAndStricterWins(t *testing.T) {
	l, m := newTestLocal(t, Config{})
	prevAt := acquire(t, m, l, "a.example").Grant().At
	l.SetFloor("a.example", botSource, 2*time.Second)
	l.Pause("a.example", prevAt.Add(5*time.Second), "operator")
	l.Pause("a.example", prevAt.Add(time.Second), "shorter") // never shortens
	until, reason, err := l.PausedUntil("a.example")
	if err != nil || reason != "operator" || !until.Equal(prevAt.Add(5*time.Second)) {
		t.Fatalf("PausedUntil = %v %q %v", until, reason, err)
	}
	gap, why, at := next(t, m, l, prevAt, Outcome{})
	if gap != 5*time.Second || why != "operator" {
		t.Fatalf("after the pause: gap %v (%s), want 5s (operator)", gap, why)
	}
	gap, why, _ = next(t, m, l, at, Outcome{})
	if gap != 2*time.Second+DefaultJitterMargin || why != ReasonCrawlDelay {
		t.Fatalf("after the pause: gap %v (%s), want the Crawl-delay floor", gap, why)
	}
	if u, _, _ := l.PausedUntil("a.example"); !u.IsZero() {
		t.Errorf("PausedUntil after the pause = %v, want zero", u)
	}
}

func TestSharedIsOneClock(t *testing.T) {
	if Shared() != Shared() || Shared() == nil {
		t.Fatal("Shared() is not one process-wide clock")
	}
}

func TestAuthorizeRaisesOneOriginForEveryUser(t *testing.T) {
	l, m := newTestLocal(t, Config{Rates: map[string]float64{"c.example": 2}})
	spacing := func(key string) time.Duration {
		t.Helper()
		m.Advance(2 * time.Second) // an empty window: only the rate decides the spacing
		first := acquire(t, m, l, key)
		first.Done(Outcome{Status: 200})
		second := acquire(t, m, l, key)
		second.Done(Outcome{Status: 200})
		return second.Grant().At.Sub(first.Grant().At)
	}
	if got := spacing("a.example"); got != spaced(3) {
		t.Fatalf("before authorisation: %v, want %v", got, spaced(3))
	}
	if err := l.Authorize("A.Example:443", 10); err != nil {
		t.Fatal(err)
	}
	if got := spacing("a.example"); got != spaced(10) {
		t.Errorf("an origin already seen, after authorisation: %v, want %v", got, spaced(10))
	}
	if err := l.Authorize("b.example", 10); err != nil {
		t.Fatal(err)
	}
	if got := spacing("b.example"); got != spaced(10) {
		t.Errorf("an origin first seen after authorisation: %v, want %v", got, spaced(10))
	}
	if err := l.Authorize("c.example", 10); err != nil {
		t.Fatal(err)
	}
	if got := spacing("c.example"); got != spaced(2) {
		t.Errorf("a lower configured rate still wins: %v, want %v", got, spaced(2))
	}
	if got := spacing("d.example"); got != spaced(3) {
		t.Errorf("other origins keep the default: %v", got)
	}
	if err := l.Authorize("a.example", 20); err != nil {
		t.Fatal(err)
	}
	if got := spacing("a.example"); got != spaced(10) {
		t.Errorf("a second, higher authorisation: %v, want the lower %v to hold", got, spaced(10))
	}
	if err := l.Authorize("a.example", 5); err != nil {
		t.Fatal(err)
	}
	if got := spacing("a.example"); got != spaced(5) {
		t.Errorf("a lower authorisation: %v, want %v", got, spaced(5))
	}
	for _, bad := range []struct {
		key  string
		rate float64
	}{{"a.example", 0}, {"a.example", -1}, {"a.example/path", 5}, {"", 5}} {
		if err := l.Authorize(bad.key, bad.rate); err == nil {
			t.Errorf("Authorize(%q, %g) accepted", bad.key, bad.rate)
		}
	}
}
