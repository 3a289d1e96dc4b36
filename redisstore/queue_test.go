package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/redisstore"
	"github.com/politecrawl/etiquette/redisstore/redistest"
)

func entry(url string) frontier.Entry {
	return frontier.Entry{URL: url, Depth: 2, Via: frontier.ViaLink}
}

func newQueue(t *testing.T, srv *redistest.Server, opts redisstore.Options) *redisstore.Queue {
	t.Helper()
	q := newStore(t, srv, opts).Queue()
	if err := q.Init(); err != nil {
		t.Fatalf("Init: %v", err)
	}
	return q
}

func add(t *testing.T, q *redisstore.Queue, key string, e frontier.Entry, limit int) frontier.Admission {
	t.Helper()
	a, err := q.AddRequest(key, e, limit)
	if err != nil {
		t.Fatalf("AddRequest(%s): %v", e.URL, err)
	}
	return a
}

func get(t *testing.T, q *redisstore.Queue, key string) (frontier.Entry, bool) {
	t.Helper()
	e, ok, err := q.GetRequest(key)
	if err != nil {
		t.Fatalf("GetRequest(%s): %v", key, err)
	}
	return e, ok
}

func TestProcessesShareOneQueueAndOneDeduplication(t *testing.T) {
	srv := redistest.Start(t)
	a := newQueue(t, srv, redisstore.Options{Crawl: "c"})
	b := newQueue(t, srv, redisstore.Options{Crawl: "c"})
	for _, tt := range []struct {
		q    *redisstore.Queue
		url  string
		want frontier.Admission
	}{
		{a, "http://o.test/1", frontier.Queued},
		{b, "http://o.test/2", frontier.Queued},
		{b, "http://o.test/1", frontier.Duplicate},
		{a, "http://o.test/3", frontier.Dropped}, // the limit of 2 waiting entries
	} {
		if got := add(t, tt.q, "o.test", entry(tt.url), 2); got != tt.want {
			t.Errorf("AddRequest(%s) = %v, want %v", tt.url, got, tt.want)
		}
	}
	if n, err := b.QueueSize("o.test"); err != nil || n != 2 {
		t.Errorf("QueueSize = %d, %v; want 2", n, err)
	}
	if got := add(t, a, "o.test", entry("http://o.test/3"), 0); got != frontier.Queued {
		t.Errorf("a dropped URL offered again = %v, want queued: a drop is not remembered", got)
	}
	var got []string
	for _, q := range []*redisstore.Queue{b, a, b} {
		e, ok := get(t, q, "o.test")
		if !ok {
			t.Fatal("GetRequest found the shared queue empty")
		}
		if e.Depth != 2 || e.Via != frontier.ViaLink {
			t.Errorf("entry %+v lost its depth or via", e)
		}
		got = append(got, e.URL)
		if err := q.Ack("o.test", e); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"http://o.test/1", "http://o.test/2", "http://o.test/3"}; !slices.Equal(got, want) {
		t.Errorf("taken in the order %v, want %v", got, want)
	}
	if _, ok := get(t, a, "o.test"); ok {
		t.Error("an acknowledged entry was handed out again")
	}
	other := newQueue(t, srv, redisstore.Options{Crawl: "another"})
	if got := add(t, other, "o.test", entry("http://o.test/1"), 0); got != frontier.Queued {
		t.Errorf("another crawl found the URL a duplicate (%v): de-duplication is per crawl", got)
	}
}

func TestAURLOfAProcessThatDiedComesBackAndIsReported(t *testing.T) {
	srv := redistest.Start(t)
	opts := redisstore.Options{LeaseExpiry: 600 * time.Millisecond}
	dying := newStore(t, srv, opts)
	q := dying.Queue()
	if err := q.Init(); err != nil {
		t.Fatal(err)
	}
	add(t, q, "o.test", entry("http://o.test/held"), 0)
	add(t, q, "o.test", entry("http://o.test/next"), 0)
	if e, ok := get(t, q, "o.test"); !ok || e.URL != "http://o.test/held" {
		t.Fatalf("GetRequest = %v, %v", e, ok)
	}
	dying.Close() // stops renewing, as a killed process would

	reported := &signalOn{text: "handed out again", seen: make(chan struct{})}
	survivor := newQueue(t, srv, redisstore.Options{LeaseExpiry: opts.LeaseExpiry, Logger: slog.New(reported)})
	if n, err := survivor.Taken(); err != nil || n != 1 {
		t.Errorf("Taken while the dead process's lease runs = %d, %v; want 1", n, err)
	}
	e, _ := get(t, survivor, "o.test")
	if e.URL != "http://o.test/next" {
		t.Fatalf("first URL for the survivor = %q, want the one nobody held", e.URL)
	}
	<-time.After(opts.LeaseExpiry) // the dead process's lease runs out
	if n, err := survivor.QueueSize("o.test"); err != nil || n != 1 {
		t.Errorf("QueueSize after the lease expired = %d, %v; want the dead process's URL waiting again", n, err)
	}
	e, ok := get(t, survivor, "o.test")
	if !ok || e.URL != "http://o.test/held" {
		t.Fatalf("after the lease expired GetRequest = %q, %v; want the dead process's URL", e.URL, ok)
	}
	<-reported.seen
	if survivor.HandedOutAgain() != 1 {
		t.Errorf("HandedOutAgain = %d, want 1", survivor.HandedOutAgain())
	}
}

func TestALiveProcessKeepsItsURLsPastTheLease(t *testing.T) {
	srv := redistest.Start(t)
	opts := redisstore.Options{LeaseExpiry: 600 * time.Millisecond}
	a := newQueue(t, srv, opts)
	b := newQueue(t, srv, opts)
	add(t, a, "o.test", entry("http://o.test/slow"), 0)
	e, _ := get(t, a, "o.test")
	<-time.After(3 * opts.LeaseExpiry) // a slow page; the heartbeat renews its lease
	if got, ok := get(t, b, "o.test"); ok {
		t.Fatalf("another process got %q while the first still held it", got.URL)
	}
	if err := a.Ack("o.test", e); err != nil {
		t.Fatal(err)
	}
	if n, err := b.Taken(); err != nil || n != 0 {
		t.Errorf("Taken after the Ack = %d, %v; want 0", n, err)
	}
}

func TestOriginsListsWhatWaitsOrIsHeld(t *testing.T) {
	srv := redistest.Start(t)
	q := newQueue(t, srv, redisstore.Options{})
	add(t, q, "a.test", entry("http://a.test/"), 0)
	add(t, q, "b.test", entry("http://b.test/"), 0)
	add(t, q, "c.test", entry("http://c.test/"), 0)
	e, _ := get(t, q, "b.test") // held, not acknowledged
	c, _ := get(t, q, "c.test")
	if err := q.Ack("c.test", c); err != nil {
		t.Fatal(err)
	}
	got, err := q.Origins()
	slices.Sort(got)
	if err != nil || !slices.Equal(got, []string{"a.test", "b.test"}) {
		t.Errorf("Origins = %v, %v; want a.test (waiting) and b.test (held)", got, err)
	}
	_ = q.Ack("b.test", e)
}

func TestTwoFrontiersCrawlEachURLOnce(t *testing.T) {
	srv := redistest.Start(t)
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for p := range 2 {
		f, err := frontier.New(frontier.Options{Storage: newStore(t, srv, redisstore.Options{Crawl: "two"}).Queue(),
			Logger: slog.New(slog.DiscardHandler), Rate: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			if _, err := f.Push(frontier.Entry{URL: fmt.Sprintf("http://o%d.test/%d", i%3, i), Depth: 1, Via: frontier.ViaStart}); err != nil {
				t.Fatal(err)
			}
		}
		for range 3 {
			wg.Go(func() {
				for {
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					it, err := f.Next(ctx)
					cancel()
					if errors.Is(err, frontier.ErrExhausted) {
						return
					}
					if err != nil {
						t.Errorf("process %d: Next: %v", p, err)
						return
					}
					mu.Lock()
					seen[it.URL]++
					mu.Unlock()
					_ = f.Ack(it, nil)
				}
			})
		}
	}
	wg.Wait()
	if len(seen) != 20 {
		t.Errorf("%d URLs handed out, want 20", len(seen))
	}
	for u, n := range seen {
		if n != 1 {
			t.Errorf("%s handed out %d times", u, n)
		}
	}
}

func TestACrawlWhoseDataVanishesSaysSo(t *testing.T) {
	srv := redistest.Start(t)
	lost := &signalOn{text: "vanished", seen: make(chan struct{})}
	q := newQueue(t, srv, redisstore.Options{LeaseExpiry: 300 * time.Millisecond, Logger: slog.New(lost)})
	add(t, q, "o.test", entry("http://o.test/"), 0)
	if err := srv.Client().FlushAll(context.Background()).Err(); err != nil { // a restart without persistence
		t.Fatal(err)
	}
	<-lost.seen
	if _, err := q.AddRequest("o.test", entry("http://o.test/x"), 0); !errors.Is(err, redisstore.ErrCrawlLost) {
		t.Errorf("AddRequest after the data vanished = %v, want ErrCrawlLost", err)
	}
	if _, _, err := q.GetRequest("o.test"); !errors.Is(err, redisstore.ErrCrawlLost) {
		t.Errorf("GetRequest after the data vanished = %v, want ErrCrawlLost", err)
	}
}

func TestQueueRefusesEntriesItCannotKeep(t *testing.T) {
	srv := redistest.Start(t)
	q := newQueue(t, srv, redisstore.Options{})
	for _, e := range []frontier.Entry{
		{URL: "http://o.test/", Depth: -1, Via: frontier.ViaLink},
		{URL: "http://o.test/", Depth: 1, Via: "two\nwords"},
	} {
		if _, err := q.AddRequest("o.test", e, 0); err == nil {
			t.Errorf("AddRequest(%+v) accepted it", e)
		}
	}
}

func TestAnEntryKeepsWhatItWasQueuedWith(t *testing.T) {
	srv := redistest.Start(t)
	q := newQueue(t, srv, redisstore.Options{})
	want := []frontier.Entry{
		{URL: "http://o.test/new", Depth: 1, Via: frontier.ViaSitemap, LastMod: time.Date(2026, 3, 1, 10, 0, 5, 0, time.UTC)},
		{URL: "http://o.test/old", Depth: 1, Via: frontier.ViaFeed, LastMod: time.Date(1969, 7, 20, 20, 17, 40, 0, time.UTC)},
		{URL: "http://o.test/epoch", Depth: 1, Via: frontier.ViaWPRest, LastMod: time.Unix(0, 0).UTC()},
		{URL: "http://o.test/none", Depth: 7, Via: frontier.ViaLink},
	}
	for _, e := range want {
		add(t, q, "o.test", e, 0)
	}
	for _, w := range want {
		if got, _ := get(t, q, "o.test"); got != w {
			t.Errorf("GetRequest = %+v, want %+v", got, w)
		}
	}
}
