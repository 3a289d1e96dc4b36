package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/redisstore"
	"github.com/politecrawl/etiquette/redisstore/redistest"
)

// store puts body under key in s, its size announced (or -1).
func store(t *testing.T, s cache.Store, key string, e cache.Entry, body []byte, announce bool) error {
	t.Helper()
	e.Size = -1
	if announce {
		e.Size = int64(len(body))
	}
	w, err := s.Put(key, &e)
	if err != nil {
		return err
	}
	if _, err := w.Write(body); err != nil {
		w.Abort()
		return err
	}
	return w.Commit()
}

func load(t *testing.T, s cache.Store, key string) (*cache.Entry, string, error) {
	t.Helper()
	e, body, err := s.Get(key)
	if err != nil {
		return nil, "", err
	}
	defer body.Close()
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return e, string(b), nil
}

func TestACachedResponseIsSharedWithEveryProcess(t *testing.T) {
	srv := redistest.Start(t)
	a := newStore(t, srv, redisstore.Options{}).Cache(nil)
	b := newStore(t, srv, redisstore.Options{}).Cache(nil)
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	e := cache.Entry{Status: 200, Header: http.Header{"Etag": {`"v1"`}, "Vary": {"Accept"}},
		VaryValues: map[string]string{"Accept": "text/html"}, Variant: "g1", RequestTime: at, ResponseTime: at.Add(time.Second)}
	for _, announce := range []bool{true, false} {
		if err := store(t, a, "http://o.test/page", e, []byte("<p>hello</p>"), announce); err != nil {
			t.Fatalf("Put (size announced: %v): %v", announce, err)
		}
		got, body, err := load(t, b, "http://o.test/page")
		if err != nil {
			t.Fatalf("another process: Get = %v", err)
		}
		if body != "<p>hello</p>" || got.Size != int64(len(body)) || got.Status != 200 || got.Header.Get("ETag") != `"v1"` ||
			got.VaryValues["Accept"] != "text/html" || got.Variant != "g1" || !got.ResponseTime.Equal(e.ResponseTime) {
			t.Errorf("another process got %+v %q; want the stored entry", got, body)
		}
	}
	if _, _, err := b.Get("http://o.test/other"); !errors.Is(err, cache.ErrNotFound) {
		t.Errorf("Get of a key never stored = %v, want ErrNotFound", err)
	}
}

func TestADamagedEntryIsNeverServed(t *testing.T) {
	srv := redistest.Start(t)
	c := newStore(t, srv, redisstore.Options{}).Cache(nil)
	ctx := context.Background()
	raw := srv.Client()
	for _, tt := range []struct {
		name   string
		damage func(key string)
	}{
		{"a flipped byte in the body", func(key string) {
			v := raw.HGet(ctx, key, "b").Val()
			raw.HSet(ctx, key, "b", v[:len(v)-1]+"X")
		}},
		{"a flipped byte in the metadata", func(key string) {
			v := raw.HGet(ctx, key, "m").Val()
			raw.HSet(ctx, key, "m", strings.Replace(v, "200", "201", 1))
		}},
		{"half an entry", func(key string) { raw.HDel(ctx, key, "b") }},
		{"not an entry of ours", func(key string) { raw.HSet(ctx, key, "m", "{}") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := store(t, c, "http://o.test/", cache.Entry{Status: 200, Header: http.Header{}}, []byte("body"), true); err != nil {
				t.Fatal(err)
			}
			keys := raw.Keys(ctx, redisstore.Namespace+"cache:*").Val()
			if len(keys) != 1 {
				t.Fatalf("keys %v", keys)
			}
			tt.damage(keys[0])
			if _, _, err := c.Get("http://o.test/"); !errors.Is(err, cache.ErrCorrupt) {
				t.Errorf("Get of a damaged entry = %v, want ErrCorrupt", err)
			}
			if _, _, err := c.Get("http://o.test/"); !errors.Is(err, cache.ErrNotFound) {
				t.Errorf("the damaged entry was not removed: %v", err)
			}
		})
	}
}

func TestAnEntryStoredUnderAnotherKeyIsNotServed(t *testing.T) {
	srv := redistest.Start(t)
	c := newStore(t, srv, redisstore.Options{}).Cache(nil)
	ctx := context.Background()
	if err := store(t, c, "http://o.test/a", cache.Entry{Status: 200}, []byte("a"), true); err != nil {
		t.Fatal(err)
	}
	if err := store(t, c, "http://o.test/b", cache.Entry{Status: 200}, []byte("b"), true); err != nil {
		t.Fatal(err)
	}
	keys := srv.Client().Keys(ctx, redisstore.Namespace+"cache:*").Val()
	// Swap the records, as a bug or an operator's mistake might.
	a, _ := srv.Client().HGetAll(ctx, keys[0]).Result()
	b, _ := srv.Client().HGetAll(ctx, keys[1]).Result()
	srv.Client().HSet(ctx, keys[0], "m", b["m"], "b", b["b"])
	srv.Client().HSet(ctx, keys[1], "m", a["m"], "b", a["b"])
	for _, k := range []string{"http://o.test/a", "http://o.test/b"} {
		if _, _, err := c.Get(k); !errors.Is(err, cache.ErrCorrupt) {
			t.Errorf("Get(%s) of another key's record = %v, want ErrCorrupt", k, err)
		}
	}
}

func TestBodiesAboveTheLimitStayInTheFallbackStore(t *testing.T) {
	srv := redistest.Start(t)
	opts := redisstore.Options{MaxCacheBody: 1024}
	disk := cache.NewMemoryStore(0) // stands for the process's disk store
	c := newStore(t, srv, opts).Cache(disk)
	other := newStore(t, srv, opts).Cache(nil)
	large := bytes.Repeat([]byte("x"), 4096)
	for _, announce := range []bool{true, false} {
		if err := store(t, c, "http://o.test/small-then-large", cache.Entry{Status: 200}, []byte("small"), true); err != nil {
			t.Fatal(err)
		}
		if err := store(t, c, "http://o.test/small-then-large", cache.Entry{Status: 200}, large, announce); err != nil {
			t.Fatalf("Put of 4 KiB (announced: %v) = %v", announce, err)
		}
		if _, body, err := load(t, c, "http://o.test/small-then-large"); err != nil || body != string(large) {
			t.Errorf("Get of the large body = %d bytes, %v; want it from the fallback", len(body), err)
		}
		if _, _, err := other.Get("http://o.test/small-then-large"); !errors.Is(err, cache.ErrNotFound) {
			t.Errorf("another process without the fallback: Get = %v; want nothing shared, not the old small body", err)
		}
		if err := store(t, c, "http://o.test/small-then-large", cache.Entry{Status: 200}, []byte("small again"), true); err != nil {
			t.Fatal(err)
		}
		if _, _, err := disk.Get("http://o.test/small-then-large"); !errors.Is(err, cache.ErrNotFound) {
			t.Errorf("a small body stored in Redis left the large one in the fallback: %v", err)
		}
	}
	if err := store(t, other, "http://o.test/large", cache.Entry{Status: 200}, large, true); !errors.Is(err, cache.ErrTooLarge) {
		t.Errorf("Put of 4 KiB without a fallback = %v, want ErrTooLarge", err)
	}
}

func TestUpdateEntryKeepsTheBody(t *testing.T) {
	srv := redistest.Start(t)
	disk := cache.NewMemoryStore(0)
	c := newStore(t, srv, redisstore.Options{MaxCacheBody: 16}).Cache(disk)
	if err := store(t, c, "http://o.test/r", cache.Entry{Status: 200, Header: http.Header{"Etag": {`"1"`}}}, []byte("in redis"), true); err != nil {
		t.Fatal(err)
	}
	if err := store(t, c, "http://o.test/d", cache.Entry{Status: 200, Header: http.Header{"Etag": {`"1"`}}}, []byte("in the fallback, too long"), true); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"http://o.test/r": "in redis", "http://o.test/d": "in the fallback, too long"} {
		if err := c.UpdateEntry(key, &cache.Entry{Status: 200, Header: http.Header{"Etag": {`"2"`}}}); err != nil {
			t.Fatalf("UpdateEntry(%s): %v", key, err)
		}
		e, body, err := load(t, c, key)
		if err != nil || body != want || e.Header.Get("ETag") != `"2"` {
			t.Errorf("after UpdateEntry(%s): %+v %q %v; want the new ETag and the old body", key, e, body, err)
		}
	}
	if err := c.UpdateEntry("http://o.test/none", &cache.Entry{Status: 200}); !errors.Is(err, cache.ErrNotFound) {
		t.Errorf("UpdateEntry of an absent key = %v, want ErrNotFound", err)
	}
	if err := c.Delete("http://o.test/d"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Get("http://o.test/d"); !errors.Is(err, cache.ErrNotFound) {
		t.Errorf("after Delete: %v", err)
	}
}

// A page fetched by one process is revalidated, not fetched again, by another.
func TestAnotherProcesssRecrawlIsConditional(t *testing.T) {
	srv := redistest.Start(t)
	var full, conditional atomic.Int32
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v1"` {
			conditional.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		full.Add(1)
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = io.WriteString(w, "the page")
	}))
	defer site.Close()
	for i := range 2 {
		client := &http.Client{Transport: cache.New(nil, newStore(t, srv, redisstore.Options{}).Cache(nil), cache.Options{})}
		resp, err := client.Get(site.URL + "/page")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "the page" {
			t.Errorf("process %d read %q", i, body)
		}
	}
	if full.Load() != 1 || conditional.Load() != 1 {
		t.Errorf("the site sent %d full answers and %d 304s; want 1 and 1", full.Load(), conditional.Load())
	}
}

func TestWithoutRedisTheCacheMissesAndTheFallbackStillAnswers(t *testing.T) {
	srv := redistest.Start(t)
	disk := cache.NewMemoryStore(0)
	c := newStore(t, srv, redisstore.Options{MaxCacheBody: 4}).Cache(disk)
	if err := store(t, c, "http://o.test/large", cache.Entry{Status: 200}, []byte("large body"), true); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	if _, body, err := load(t, c, "http://o.test/large"); err != nil || body != "large body" {
		t.Errorf("Get of a fallback entry without Redis = %q, %v", body, err)
	}
	plain := newStore(t, srv, redisstore.Options{}).Cache(nil)
	if _, _, err := plain.Get("http://o.test/x"); err == nil {
		t.Error("Get without Redis and without a fallback found an entry")
	}
}
