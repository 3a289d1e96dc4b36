package politeness

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// pacedSite is an origin that steers a crawler the ways an operator does: a Crawl-delay, and a
// 429 with Retry-After on the first request for /a; its start page may be cached.
func pacedSite(t *testing.T) *etiquettetest.Origin {
	t.Helper()
	site := etiquettetest.NewSite()
	t.Cleanup(site.Close)
	o := site.NewOrigin().Robots("User-agent: *\nCrawl-delay: 1\n")
	o.Serve("/", etiquettetest.HTMLPage("Home", "/a").Header("Cache-Control", "max-age=600")).Page("/a", "A")
	o.Nth("/a", 1, etiquettetest.Status(429).RetryAfter(time.Second))
	return o
}

// crawlPaced reads /, /a (429, paused, re-sent) and / again (from the cache) through a door
// built from p with a clock, keeper and cache of its own, so nothing of the process is shared.
func crawlPaced(t *testing.T, o *etiquettetest.Origin, p Policy) {
	t.Helper()
	clock, err := hostclock.NewLocal(hostclock.Config{}) // no Logger: the clock's own default
	if err != nil {
		t.Fatal(err)
	}
	p.Identity = identity.Identity{Profile: identity.Generic, Token: "ExampleBot", Version: "1.0", InfoURL: "https://example.org/bot"}
	p.Clock, p.Robots, p.CacheStore = clock, robots.NewKeeper(robots.Options{}), cache.NewMemoryStore(0)
	d, err := NewDoor(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/", "/a", "/"} {
		resp, err := d.Client().Get(o.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d, want 200 (the 429 re-sent after its Retry-After)", path, resp.StatusCode)
		}
	}
}

// captureDefault makes slog's default logger write every level to a buffer until the test ends.
// slog.SetDefault is process-wide: tests that call it must not run in parallel (none in this
// package does).
func captureDefault(t *testing.T) *bytes.Buffer {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

// TestDoorWithoutLoggerIsQuiet: a scraper that set no Policy.Logger sees none of the door's
// routine pacing on its output — a Crawl-delay, a 429 with Retry-After, the re-send, the cache —
// however verbose its default logger is.
func TestDoorWithoutLoggerIsQuiet(t *testing.T) {
	buf := captureDefault(t)
	crawlPaced(t, pacedSite(t), Policy{})
	if buf.Len() > 0 {
		t.Errorf("a door without Policy.Logger logged on slog's default logger:\n%s", buf)
	}
}

// TestDoorLogsDecisionsToItsLogger: the same crawl with a logger at Debug shows each decision.
func TestDoorLogsDecisionsToItsLogger(t *testing.T) {
	dflt := captureDefault(t)
	var buf bytes.Buffer
	crawlPaced(t, pacedSite(t), Policy{Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	log := buf.String()
	for _, want := range []string{
		"level=INFO msg=\"etiquette paused\"", "reason=retry-after",
		"level=DEBUG msg=\"etiquette waited\"", "reason=crawl-delay",
		"level=DEBUG msg=\"etiquette retried\"", "backoff: retrying",
		"cache=fresh",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the door's logger has no %q:\n%s", want, log)
		}
	}
	if dflt.Len() > 0 {
		t.Errorf("a door with a Logger wrote to slog's default logger too:\n%s", dflt)
	}
}

// TestLogLevels pins the level of each kind of event: Warn for what changes a crawl's results
// beyond one request (a host given up, a redirect into the private network, a body cut, a
// weakened collector), Info for a site's steering and per-URL refusals, Debug for the rest.
func TestLogLevels(t *testing.T) {
	tests := []struct {
		e    events.Event
		want slog.Level
	}{
		{events.Event{Type: events.Admitted}, slog.LevelDebug},
		{events.Event{Type: events.Waited, Reason: "crawl-delay"}, slog.LevelDebug},
		{events.Event{Type: events.Response, Cache: "fresh"}, slog.LevelDebug},
		{events.Event{Type: events.Retried}, slog.LevelDebug},
		{events.Event{Type: events.Paused, Reason: hostclock.ReasonRetryAfter}, slog.LevelInfo},
		{events.Event{Type: events.Paused, Reason: hostclock.ReasonBackoff}, slog.LevelInfo},
		{events.Event{Type: events.Paused, Reason: hostclock.ReasonGiveUp}, slog.LevelWarn},
		{events.Event{Type: events.Refused, Reason: "robots"}, slog.LevelInfo},
		{events.Event{Type: events.Refused, Reason: "budget"}, slog.LevelInfo},
		{events.Event{Type: events.Refused, Reason: "error"}, slog.LevelInfo},
		{events.Event{Type: events.Refused, Reason: "deadline"}, slog.LevelInfo},
		{events.Event{Type: events.Refused, Reason: "stopped"}, slog.LevelDebug},
		{events.Event{Type: events.Refused, Reason: "private-network"}, slog.LevelWarn},
		{events.Event{Type: events.Notice, Reason: cookieRefused}, slog.LevelDebug},
		{events.Event{Type: events.Notice, Reason: hostclock.ReasonLatency}, slog.LevelInfo},
		{events.Event{Type: events.Notice, Reason: "truncated"}, slog.LevelWarn},
		{events.Event{Type: events.Notice, Reason: "backlog"}, slog.LevelWarn},
		{events.Event{Type: events.Notice, Reason: "door-bypassed"}, slog.LevelWarn},
		{events.Event{Type: events.Notice, Reason: "cache-corrupt"}, slog.LevelWarn},
	}
	for _, tt := range tests {
		if got := eventLevel(tt.e); got != tt.want {
			t.Errorf("%s %s: level %v, want %v", tt.e.Type, tt.e.Reason, got, tt.want)
		}
	}
}
