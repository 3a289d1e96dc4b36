package politeness

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// testDoor is a door with its own clock and keeper, authorised to go fast against srv.
func testDoor(t *testing.T, srv *httptest.Server, mutate func(*Policy)) *Door {
	t.Helper()
	return testDoorAt(t, srv.Listener.Addr().String(), mutate)
}

// testDoorAt is testDoor for the origin at addr (host:port), e.g. an etiquettetest origin.
func testDoorAt(t *testing.T, addr string, mutate func(*Policy)) *Door {
	t.Helper()
	clock, err := hostclock.NewLocal(hostclock.Config{Authorized: map[string]float64{addr: 100}, Concurrency: 4, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	p := Policy{
		Identity: identity.Identity{Profile: identity.Generic, Token: "ExampleBot", Version: "1.0", InfoURL: "https://example.org/bot"},
		Clock:    clock, Robots: robots.NewKeeper(robots.Options{}), NoCache: true, Logger: slog.New(slog.DiscardHandler),
	}
	if mutate != nil {
		mutate(&p)
	}
	d, err := NewDoor(p)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestBodyCap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/"), "%d", &n)
		io.WriteString(w, strings.Repeat("x", n))
	}))
	defer srv.Close()
	var got []events.Event
	d := testDoor(t, srv, func(p *Policy) {
		p.MaxBodyBytes = map[kind.Kind]int64{kind.HTML: 100}
		p.Events = &events.Bus{}
		p.Events.Subscribe(func(e events.Event) {
			if e.Type == events.Response && e.Kind == kind.HTML {
				got = append(got, e)
			}
		})
	})
	for _, c := range []struct {
		size      int
		truncated bool
	}{{0, false}, {99, false}, {100, false}, {101, true}, {5000, true}} {
		got = nil
		resp, err := d.Client().Get(fmt.Sprintf("%s/%d", srv.URL, c.size))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if c.truncated {
			var tooLarge *BodyTooLargeError
			if !errors.As(err, &tooLarge) || tooLarge.Limit != 100 || len(b) != 100 {
				t.Errorf("%d bytes: read %d, err %v; want the first 100 and a *BodyTooLargeError", c.size, len(b), err)
			}
		} else if err != nil || len(b) != c.size {
			t.Errorf("%d bytes: read %d, err %v", c.size, len(b), err)
		}
		if len(got) != 1 || got[0].Truncated != c.truncated || got[0].Bytes != int64(min(c.size, 100)) || got[0].Status != 200 {
			t.Errorf("%d bytes: response events %+v", c.size, got)
		}
	}
}

func TestNewDoorRefuses(t *testing.T) {
	valid := identity.Identity{Profile: identity.Generic, Token: "ExampleBot", Version: "1.0", InfoURL: "https://example.org/bot"}
	cases := map[string]Policy{
		"no identity":                      {},
		"invalid identity":                 {Identity: identity.Identity{Token: "curl", Version: "8.0", InfoURL: "https://example.org"}},
		"unauthorised rate":                {Identity: valid, Rate: 10},
		"user-triggered with a disk cache": {Identity: valid, Mode: UserTriggered, CacheStore: diskStore(t)},
		"a negative MaxWait":               {Identity: valid, Mode: UserTriggered, MaxWait: -time.Second},
	}
	for name, p := range cases {
		if _, err := NewDoor(p); err == nil {
			t.Errorf("%s: NewDoor accepted it", name)
		}
	}
}

func diskStore(t *testing.T) cache.Store {
	s, err := cache.NewDiskStore(t.TempDir(), cache.DiskOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A user-triggered door's cache stays in memory: a memory store is accepted, a disk store refused
// with an error that says what to pass instead.
func TestUserTriggeredDoorKeepsItsCacheInMemory(t *testing.T) {
	valid := identity.Identity{Profile: identity.Generic, Token: "ExampleBot", Version: "1.0", InfoURL: "https://example.org/bot"}
	if _, err := NewDoor(Policy{Identity: valid, Mode: UserTriggered, CacheStore: cache.NewMemoryStore(0)}); err != nil {
		t.Errorf("a memory store was refused: %v", err)
	}
	_, err := NewDoor(Policy{Identity: valid, Mode: UserTriggered, CacheStore: diskStore(t)})
	if err == nil || !strings.Contains(err.Error(), "*cache.MemoryStore") {
		t.Errorf("a disk store: %v; want a refusal naming *cache.MemoryStore", err)
	}
}

// Doors built without Policy.CacheStore share the disk store of the default directory: one index
// of it in memory and one segment file per process, however many collectors a program builds.
func TestDoorsShareTheDefaultDiskStore(t *testing.T) {
	valid := identity.Identity{Profile: identity.Generic, Token: "ExampleBot", Version: "1.0", InfoURL: "https://example.org/bot"}
	quiet := slog.New(slog.DiscardHandler)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	first, err := Policy{Identity: valid}.cacheStore(quiet)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Policy{Identity: valid}.cacheStore(quiet)
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Error("two doors opened two stores on the default directory")
	}
	if _, ok := first.(*cache.DiskStore); !ok {
		t.Errorf("the default store is a %T, want a *cache.DiskStore", first)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	if other, err := (Policy{Identity: valid}).cacheStore(quiet); err != nil || other == first {
		t.Errorf("another default directory got the same store (%v)", err)
	}
}
