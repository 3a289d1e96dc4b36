package cache_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gregjones/httpcache"

	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// clock is an injected time source the tests advance by hand; the origin stamps its Date from it.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// origin is an httptest server whose answers a test scripts, recording each request it receives.
type origin struct {
	*httptest.Server
	clock *clock
	mu    sync.Mutex
	reqs  []http.Header
	bytes int64 // body bytes sent
	// answer writes the response; the Date header is already set from the clock.
	answer func(w http.ResponseWriter, r *http.Request) string
}

func newOrigin(t *testing.T, c *clock, answer func(w http.ResponseWriter, r *http.Request) string) *origin {
	o := &origin{clock: c, answer: answer}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.reqs = append(o.reqs, r.Header.Clone())
		o.mu.Unlock()
		w.Header().Set("Date", c.Now().Format(http.TimeFormat))
		body := o.answer(w, r)
		n, _ := io.WriteString(w, body)
		o.mu.Lock()
		o.bytes += int64(n)
		o.mu.Unlock()
	}))
	t.Cleanup(o.Close)
	return o
}

func (o *origin) requests() []http.Header {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]http.Header(nil), o.reqs...)
}

func (o *origin) last() http.Header {
	r := o.requests()
	if len(r) == 0 {
		return nil
	}
	return r[len(r)-1]
}

type result struct {
	status string // cache.StatusOf
	code   int
	body   string
	header http.Header
}

func do(t *testing.T, rt http.RoundTripper, req *http.Request) result {
	t.Helper()
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("reading %s: %v", req.URL, err)
	}
	return result{cache.StatusOf(resp), resp.StatusCode, string(b), resp.Header}
}

func get(t *testing.T, rt http.RoundTripper, url string, hdr ...string) result {
	t.Helper()
	return do(t, rt, newReq(t, http.MethodGet, url, hdr...))
}

func newReq(t *testing.T, method, url string, hdr ...string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	return req
}

func newCache(c *clock, o cache.Options) *cache.Transport {
	o.Now = c.Now
	return cache.New(http.DefaultTransport, nil, o)
}

func TestFreshHitSpendsNoRequest(t *testing.T) {
	c := newClock()
	srv := newOrigin(t, c, func(w http.ResponseWriter, r *http.Request) string {
		w.Header().Set("Cache-Control", "max-age=60")
		return "hello"
	})
	tr := newCache(c, cache.Options{})
	if r := get(t, tr, srv.URL); r.status != cache.Miss || r.body != "hello" {
		t.Fatalf("first read = %q %q, want miss hello", r.status, r.body)
	}
	c.Advance(59 * time.Second)
	r := get(t, tr, srv.URL)
	if r.status != cache.Fresh || r.body != "hello" || r.header.Get("Age") != "59" {
		t.Fatalf("second read = %q %q Age %q, want fresh hello Age 59", r.status, r.body, r.header.Get("Age"))
	}
	c.Advance(2 * time.Second)
	if r := get(t, tr, srv.URL); r.status != cache.Miss {
		t.Fatalf("read after max-age = %q, want miss (no validator to revalidate with)", r.status)
	}
	if n := len(srv.requests()); n != 2 {
		t.Errorf("origin saw %d requests, want 2", n)
	}
	want := cache.Stats{Miss: 2, Fresh: 1, BytesSaved: 5}
	if got := tr.Stats(); got != want {
		t.Errorf("Stats = %+v, want %+v", got, want)
	}
}

func TestRevalidationSendsBothValidatorsAndMerges304(t *testing.T) {
	c := newClock()
	const etag, lm = `"v1"`, "Sun, 01 Feb 2026 00:00:00 GMT"
	srv := newOrigin(t, c, func(w http.ResponseWriter, r *http.Request) string {
		if r.Header.Get("If-None-Match") == etag {
			w.Header().Set("Cache-Control", "max-age=600")
			w.Header().Set("X-Version", "2")
			w.WriteHeader(http.StatusNotModified)
			return ""
		}
		w.Header().Set("ETag", etag)
		w.Header().Set("Last-Modified", lm)
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Version", "1")
		return "the page"
	})
	tr := newCache(c, cache.Options{})
	get(t, tr, srv.URL)
	c.Advance(time.Minute)
	r := get(t, tr, srv.URL)
	if r.status != cache.Revalidated || r.body != "the page" {
		t.Fatalf("re-read = %q %q, want revalidated, stored body", r.status, r.body)
	}
	h := srv.last()
	if h.Get("If-None-Match") != etag || h.Get("If-Modified-Since") != lm {
		t.Errorf("revalidation carried If-None-Match %q If-Modified-Since %q, want %q and %q",
			h.Get("If-None-Match"), h.Get("If-Modified-Since"), etag, lm)
	}
	if r.header.Get("X-Version") != "2" || r.header.Get("Cache-Control") != "max-age=600" {
		t.Errorf("merged headers X-Version %q Cache-Control %q, want the 304's", r.header.Get("X-Version"), r.header.Get("Cache-Control"))
	}
	if r.header.Get("Content-Length") != "8" {
		t.Errorf("Content-Length = %q, want the stored body's 8", r.header.Get("Content-Length"))
	}
	c.Advance(5 * time.Minute)
	if r := get(t, tr, srv.URL); r.status != cache.Fresh || r.body != "the page" {
		t.Errorf("read within the 304's max-age = %q %q, want fresh", r.status, r.body)
	}
	if got := tr.Stats(); got.Revalidated != 1 || got.Fresh != 1 || got.BytesSaved != 16 {
		t.Errorf("Stats = %+v, want 1 revalidated, 1 fresh, 16 bytes saved", got)
	}
}

func TestVaryKeepsSeveralVariants(t *testing.T) {
	c := newClock()
	srv := newOrigin(t, c, func(w http.ResponseWriter, r *http.Request) string {
		w.Header().Set("Cache-Control", "max-age=60")
		w.Header().Set("Vary", "Accept-Language, Accept")
		return "page in " + r.Header.Get("Accept-Language")
	})
	tr := newCache(c, cache.Options{})
	for _, lang := range []string{"en", "de", "fr"} {
		if r := get(t, tr, srv.URL, "Accept-Language", lang); r.status != cache.Miss {
			t.Fatalf("first %s read = %q, want miss", lang, r.status)
		}
	}
	for _, tc := range []struct{ lang, status, body string }{
		{"en", cache.Fresh, "page in en"},
		{"de", cache.Fresh, "page in de"},
		{" fr ", cache.Fresh, "page in fr"}, // whitespace around a member does not split variants
		{"it", cache.Miss, "page in it"},
	} {
		r := get(t, tr, srv.URL, "Accept-Language", tc.lang)
		if r.status != tc.status || r.body != tc.body {
			t.Errorf("Accept-Language %q: %q %q, want %q %q", tc.lang, r.status, r.body, tc.status, tc.body)
		}
	}
	if r := get(t, tr, srv.URL, "Accept-Language", "en", "Accept", "text/html"); r.status != cache.Miss {
		t.Errorf("a second varying field that differs: %q, want miss", r.status)
	}
}

func TestVaryStarIsNeverReused(t *testing.T) {
	c := newClock()
	srv := newOrigin(t, c, func(w http.ResponseWriter, r *http.Request) string {
		w.Header().Set("Cache-Control", "max-age=60")
		w.Header().Set("Vary", "*")
		return "x"
	})
	tr := newCache(c, cache.Options{})
	get(t, tr, srv.URL)
	if r := get(t, tr, srv.URL); r.status != cache.Miss {
		t.Errorf("Vary: * reused: %q", r.status)
	}
}

// TestErrorDuringRevalidation pins what an origin error does to a stored response: it is kept with
// its validators, served stale only where stale-if-error (or the options) allow it.
func TestErrorDuringRevalidation(t *testing.T) {
	for _, tc := range []struct {
		name         string
		cc           string
		opts         cache.Options
		errStatus    int
		want         string // status of the read during the error
		wantCode     int
		wantBody     string
		wantInterval time.Duration
		replaced     bool // the error answer is a real representation that replaces the stored one
	}{
		{"stale-if-error covers it", "max-age=10, stale-if-error=60", cache.Options{}, 503, cache.Stale, 200, "good", 30 * time.Second, false},
		{"stale-if-error too short", "max-age=10, stale-if-error=5", cache.Options{}, 503, cache.Miss, 503, "down", 30 * time.Second, false},
		{"no stale-if-error", "max-age=10", cache.Options{}, 503, cache.Miss, 503, "down", 30 * time.Second, false},
		{"must-revalidate forbids", "max-age=10, must-revalidate, stale-if-error=60", cache.Options{}, 500, cache.Miss, 500, "down", 30 * time.Second, false},
		{"option allows", "max-age=10", cache.Options{StaleIfError: time.Hour}, 502, cache.Stale, 200, "good", 30 * time.Second, false},
		{"404 is an answer, not an error", "max-age=10, stale-if-error=60", cache.Options{}, 404, cache.Miss, 404, "down", 30 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			failing := false
			var mu sync.Mutex
			srv := newOrigin(t, c, func(w http.ResponseWriter, r *http.Request) string {
				mu.Lock()
				defer mu.Unlock()
				if failing {
					w.WriteHeader(tc.errStatus)
					return "down"
				}
				if r.Header.Get("If-None-Match") == `"a"` {
					w.WriteHeader(http.StatusNotModified)
					return ""
				}
				w.Header().Set("Cache-Control", tc.cc)
				w.Header().Set("ETag", `"a"`)
				return "good"
			})
			tr := newCache(c, tc.opts)
			get(t, tr, srv.URL)
			c.Advance(tc.wantInterval)
			mu.Lock()
			failing = true
			mu.Unlock()
			r := get(t, tr, srv.URL)
			if r.status != tc.want || r.code != tc.wantCode || r.body != tc.wantBody {
				t.Fatalf("read during the error = %q %d %q, want %q %d %q", r.status, r.code, r.body, tc.want, tc.wantCode, tc.wantBody)
			}
			mu.Lock()
			failing = false
			mu.Unlock()
			r = get(t, tr, srv.URL)
			if tc.replaced {
				if r.status != cache.Miss || srv.last().Get("If-None-Match") != "" {
					t.Errorf("read after a stored 404 = %q, want an unconditional miss", r.status)
				}
				return
			}
			if r.status != cache.Revalidated || r.body != "good" {
				t.Errorf("read after the error = %q %q, want revalidated good", r.status, r.body)
			}
			if got := srv.last().Get("If-None-Match"); got != `"a"` {
				t.Errorf("request after the error carried If-None-Match %q: the validator was lost", got)
			}
		})
	}
}

func TestNetworkErrorServesStaleWhileDisconnected(t *testing.T) {
	c := newClock()
	srv := newOrigin(t, c, func(w http.ResponseWriter, r *http.Request) string {
		w.Header().Set("Cache-Control", "max-age=10")
		return "kept"
	})
	tr := newCache(c, cache.Options{StaleOnDisconnect: time.Hour})
	get(t, tr, srv.URL)
	srv.Close()
	c.Advance(30 * time.Minute)
	if r := get(t, tr, srv.URL); r.status != cache.Stale || r.body != "kept" {
		t.Errorf("read while the origin is unreachable = %q %q, want stale kept", r.status, r.body)
	}
	c.Advance(time.Hour)
	if _, err := tr.RoundTrip(newReq(t, http.MethodGet, srv.URL)); err == nil {
		t.Errorf("read 90 min past freshness with StaleOnDisconnect 1h: got a response, want the network error")
	}
}

func TestUnsafeMethodsInvalidate(t *testing.T) {
	for _, tc := range []struct {
		method      string
		status      int
		invalidates bool
	}{
		{http.MethodPost, 200, true},
		{http.MethodPut, 201, true},
		{http.MethodDelete, 204, true},
		{"PATCH", 303, true},
		{http.MethodPost, 500, false},
		{http.MethodOptions, 200, false},
	} {
		t.Run(fmt.Sprintf("%s %d", tc.method, tc.status), func(t *testing.T) {
			c := newClock()
			srv := newOrigin(t, c, func(w http.ResponseWriter, r *http.Request) string {
				if r.Method != http.MethodGet {
					w.WriteHeader(tc.status)
					return ""
				}
				w.Header().Set("Cache-Control", "max-age=600")
				return "doc"
			})
			tr := newCache(c, cache.Options{})
			get(t, tr, srv.URL+"/doc")
			r := do(t, tr, newReq(t, tc.method, srv.URL+"/doc"))
			if r.status != "" {
				t.Errorf("%s reported %q, want \"\" (the cache does not take part)", tc.method, r.status)
			}
			want := cache.Fresh
			if tc.invalidates {
				want = cache.Miss
			}
			if r := get(t, tr, srv.URL+"/doc"); r.status != want {
				t.Errorf("GET after %s %d = %q, want %q", tc.method, tc.status, r.status, want)
			}
		})
	}
}

func TestKindPolicy(t *testing.T) {
	c := newClock()
	srv := newOrigin(t, c, func(w http.ResponseWriter, r *http.Request) string {
		if r.Header.Get("If-None-Match") == `"r"` {
			w.WriteHeader(http.StatusNotModified)
			return ""
		}
		w.Header().Set("ETag", `"r"`)
		w.Header().Set("Cache-Control", "max-age=3600")
		return "body of " + r.URL.Path
	})
	tr := newCache(c, cache.Options{})
	for _, tc := range []struct {
		k    kind.Kind
		path string
		want string
	}{
		{kind.Robots, "/robots.txt", cache.Revalidated},
		{kind.Sitemap, "/sitemap.xml", cache.Revalidated},
		{kind.LLMs, "/llms.txt", cache.Revalidated},
		{kind.Feed, "/feed.xml", cache.Revalidated},
		{kind.HTML, "/page", cache.Fresh},
		{kind.API, "/api", cache.Fresh},
	} {
		req := kind.Mark(newReq(t, http.MethodGet, srv.URL+tc.path), tc.k)
		do(t, tr, req)
		c.Advance(time.Minute)
		before := len(srv.requests())
		r := do(t, tr, kind.Mark(newReq(t, http.MethodGet, srv.URL+tc.path), tc.k))
		if r.status != tc.want || r.body != "body of "+tc.path {
			t.Errorf("%s re-read within max-age = %q %q, want %q", tc.k, r.status, r.body, tc.want)
		}
		if tc.want == cache.Revalidated {
			if h := srv.requests()[before]; h.Get("If-None-Match") != `"r"` {
				t.Errorf("%s re-read was not conditional", tc.k)
			}
		}
	}
}

func TestMinRevisit(t *testing.T) {
	c := newClock()
	srv := newOrigin(t, c, func(w http.ResponseWriter, r *http.Request) string {
		w.Header().Set("ETag", `"m"`)
		if r.Header.Get("If-None-Match") == `"m"` {
			w.WriteHeader(http.StatusNotModified)
			return ""
		}
		switch r.URL.Path {
		case "/strict":
			w.Header().Set("Cache-Control", "max-age=0, must-revalidate")
		case "/cdn":
			w.Header().Set("Cache-Control", "max-age=0")
			w.Header().Set("Age", "7200") // old at a CDN, but this crawler asked just now
		default:
			w.Header().Set("Cache-Control", "max-age=0")
		}
		return "m"
	})
	tr := newCache(c, cache.Options{MinRevisit: time.Hour})
	for _, tc := range []struct {
		path  string
		k     kind.Kind
		after time.Duration
		want  string
	}{
		{"/page", kind.HTML, 30 * time.Minute, cache.Stale},
		{"/page2", kind.HTML, 61 * time.Minute, cache.Revalidated},
		{"/cdn", kind.HTML, 30 * time.Minute, cache.Stale},
		{"/strict", kind.HTML, time.Minute, cache.Revalidated},
		{"/robots.txt", kind.Robots, time.Minute, cache.Revalidated},
	} {
		do(t, tr, kind.Mark(newReq(t, http.MethodGet, srv.URL+tc.path), tc.k))
		c.Advance(tc.after)
		if r := do(t, tr, kind.Mark(newReq(t, http.MethodGet, srv.URL+tc.path), tc.k)); r.status != tc.want {
			t.Errorf("%s (%s) re-read after %s = %q, want %q", tc.path, tc.k, tc.after, r.status, tc.want)
		}
	}
}

func TestHeuristicFreshness(t *testing.T) {
	for _, tc := range []struct {
		name     string
		modified time.Duration // before the response's Date
		opts     cache.Options
		after    time.Duration
		want     string
	}{
		{"10% of 5h is 30 min: fresh at 29 min", 5 * time.Hour, cache.Options{}, 29 * time.Minute, cache.Fresh},
		{"10% of 5h is 30 min: stale at 31 min", 5 * time.Hour, cache.Options{}, 31 * time.Minute, cache.Revalidated},
		{"capped at 24 h", 100 * 24 * time.Hour, cache.Options{}, 25 * time.Hour, cache.Revalidated},
		{"cap below the cap", 100 * 24 * time.Hour, cache.Options{}, 23 * time.Hour, cache.Fresh},
		{"fraction 0.5", 2 * time.Hour, cache.Options{HeuristicFraction: 0.5}, 59 * time.Minute, cache.Fresh},
		{"heuristic off", 100 * time.Hour, cache.Options{HeuristicFraction: -1}, time.Second, cache.Revalidated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			lm := c.Now().Add(-tc.modified).Format(http.TimeFormat)
			srv := newOrigin(t, c, func(w http.ResponseWriter, r *http.Request) string {
				if r.Header.Get("If-Modified-Since") == lm {
					w.WriteHeader(http.StatusNotModified)
					return ""
				}
				w.Header().Set("Last-Modified", lm)
				return "h"
			})
			tr := newCache(c, tc.opts)
			get(t, tr, srv.URL)
			c.Advance(tc.after)
			if r := get(t, tr, srv.URL); r.status != tc.want {
				t.Errorf("read after %s = %q, want %q", tc.after, r.status, tc.want)
			}
		})
	}
}

func TestRequestsTheCacheStaysOutOf(t *testing.T) {
	c := newClock()
	srv := newOrigin(t, c, func(w http.ResponseWriter, r *http.Request) string {
		w.Header().Set("Cache-Control", "max-age=600")
		w.Header().Set("ETag", `"e"`)
		// An origin's own Etiquette-Cache header must never be taken for the cache's verdict.
		w.Header().Set(cache.StatusHeader, "fresh")
		if r.Header.Get("If-None-Match") == `"e"` {
			w.WriteHeader(http.StatusNotModified)
			return ""
		}
		return "e"
	})
	tr := newCache(c, cache.Options{})
	if r := get(t, tr, srv.URL); r.status != cache.Miss {
		t.Fatalf("first read = %q, want miss", r.status)
	}
	for _, tc := range []struct {
		name   string
		hdr    []string
		status string
		code   int
	}{
		{"Range", []string{"Range", "bytes=0-0"}, "", 200},
		{"request no-store", []string{"Cache-Control", "no-store"}, "", 200},
		{"caller's own If-None-Match reaches the origin", []string{"If-None-Match", `"e"`}, cache.Miss, 304},
	} {
		r := get(t, tr, srv.URL, tc.hdr...)
		if r.status != tc.status || r.code != tc.code {
			t.Errorf("%s: %q %d, want %q %d", tc.name, r.status, r.code, tc.status, tc.code)
		}
	}
	if got := srv.last().Get("If-None-Match"); got != `"e"` {
		t.Errorf("the caller's If-None-Match arrived as %q", got)
	}
	if r := get(t, tr, srv.URL, "Cache-Control", "only-if-cached"); r.status != cache.Fresh {
		t.Errorf("only-if-cached with a fresh copy = %q, want fresh", r.status)
	}
	if r := get(t, tr, srv.URL+"/other", "Cache-Control", "only-if-cached"); r.code != http.StatusGatewayTimeout {
		t.Errorf("only-if-cached with nothing stored = %d, want 504", r.code)
	}
}

func TestNoStoreIsNotStored(t *testing.T) {
	c := newClock()
	srv := newOrigin(t, c, func(w http.ResponseWriter, r *http.Request) string {
		w.Header().Set("Cache-Control", "no-store, max-age=600")
		return "secret"
	})
	mem := cache.NewMemoryStore(0)
	tr := cache.New(http.DefaultTransport, mem, cache.Options{Now: c.Now})
	get(t, tr, srv.URL)
	if r := get(t, tr, srv.URL); r.status != cache.Miss {
		t.Errorf("no-store response reused: %q", r.status)
	}
	if cache.MemoryEntries(mem) != 0 {
		t.Errorf("the store holds %d entries after no-store responses, want 0", cache.MemoryEntries(mem))
	}
}

func TestHTTPCacheAdapter(t *testing.T) {
	c := newClock()
	srv := newOrigin(t, c, func(w http.ResponseWriter, r *http.Request) string {
		w.Header().Set("Cache-Control", "max-age=600")
		if r.URL.Path == "/big" {
			return strings.Repeat("b", 2000)
		}
		return "small"
	})
	backend := httpcache.NewMemoryCache()
	tr := cache.New(http.DefaultTransport, cache.FromHTTPCache(backend, 1000), cache.Options{Now: c.Now})
	for _, tc := range []struct {
		path   string
		second string
	}{
		{"/small", cache.Fresh},
		{"/big", cache.Miss}, // larger than the store holds: passes through uncached
	} {
		first := get(t, tr, srv.URL+tc.path)
		r := get(t, tr, srv.URL+tc.path)
		if r.status != tc.second || r.body != first.body {
			t.Errorf("%s second read = %q (body %d bytes), want %q with the same body", tc.path, r.status, len(r.body), tc.second)
		}
	}
	// A value damaged inside the backend is a miss, never served.
	for _, key := range []string{"GET " + srv.URL + "/small"} {
		b, ok := backend.Get(key)
		if !ok {
			t.Fatalf("nothing stored under %q", key)
		}
		d := append([]byte(nil), b...)
		d[0] ^= 0xff
		backend.Set(key, d)
	}
	if r := get(t, tr, srv.URL+"/small"); r.status != cache.Miss || r.body != "small" {
		t.Errorf("read of a damaged value = %q %q, want miss small", r.status, r.body)
	}
}

func TestStaleWhileRevalidate(t *testing.T) {
	c := newClock()
	var mu sync.Mutex
	version := "1"
	srv := newOrigin(t, c, func(w http.ResponseWriter, r *http.Request) string {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Cache-Control", "max-age=10, stale-while-revalidate=60")
		return "v" + version
	})
	var bg []events.Event
	var bgMu sync.Mutex
	reported := make(chan struct{}, 1)
	sink := sinkFunc(func(e events.Event) {
		bgMu.Lock()
		bg = append(bg, e)
		bgMu.Unlock()
		select {
		case reported <- struct{}{}:
		default:
		}
	})
	tr := newCache(c, cache.Options{Events: sink})
	get(t, tr, srv.URL)
	mu.Lock()
	version = "2"
	mu.Unlock()
	c.Advance(30 * time.Second)
	if r := get(t, tr, srv.URL); r.status != cache.Stale || r.body != "v1" {
		t.Fatalf("read inside the window = %q %q, want stale v1", r.status, r.body)
	}
	// The background revalidation reports its response once it has read it to the end, which
	// commits v2 to the store.
	select {
	case <-reported:
	case <-time.After(10 * time.Second):
		t.Fatal("the background revalidation was never reported")
	}
	if r := get(t, tr, srv.URL); r.body != "v2" || r.status != cache.Fresh {
		t.Fatalf("read after the background revalidation = %q %q, want fresh v2", r.status, r.body)
	}
	bgMu.Lock()
	defer bgMu.Unlock()
	if len(bg) != 1 || bg[0].Type != events.Response || bg[0].Status != 200 || bg[0].Bytes != 2 || bg[0].Cache != cache.Miss {
		t.Errorf("the background revalidation was reported as %+v; want one Response event, 200, 2 bytes, miss", bg)
	}
}

// sinkFunc lets a function receive events.
type sinkFunc func(events.Event)

func (f sinkFunc) Emit(e events.Event) { f(e) }

func TestMemoryStoreBounds(t *testing.T) {
	c := newClock()
	srv := newOrigin(t, c, func(w http.ResponseWriter, r *http.Request) string {
		w.Header().Set("Cache-Control", "max-age=600")
		if r.URL.Path == "/big" {
			return strings.Repeat("B", 2000)
		}
		return strings.Repeat("s", 500)
	})
	mem := cache.NewMemoryStore(4000) // a body may use a quarter: 1000 bytes
	tr := cache.New(http.DefaultTransport, mem, cache.Options{Now: c.Now})
	for range 2 {
		if r := get(t, tr, srv.URL+"/big"); r.status != cache.Miss || len(r.body) != 2000 {
			t.Fatalf("big body: %q, %d bytes; want a miss with the whole body every time", r.status, len(r.body))
		}
	}
	for i := range 20 {
		get(t, tr, fmt.Sprintf("%s/small/%d", srv.URL, i))
	}
	if n := cache.MemoryEntries(mem); n == 0 || n >= 20 {
		t.Errorf("the 4000-byte store holds %d of 20 500-byte bodies; want some, not all", n)
	}
	if r := get(t, tr, srv.URL+"/small/19"); r.status != cache.Fresh {
		t.Errorf("the most recent body was evicted: %q", r.status)
	}
	if r := get(t, tr, srv.URL+"/small/0"); r.status != cache.Miss {
		t.Errorf("the oldest body survived: %q", r.status)
	}
}

func TestOmitHeadersAreNeverStored(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "PHPSESSID", Value: "secret"})
		w.Header().Set("Cache-Control", "max-age=3600")
		w.Header().Set("ETag", `"1"`)
		if r.Header.Get("If-None-Match") == `"1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		io.WriteString(w, "page")
	}))
	defer srv.Close()
	store := cache.NewMemoryStore(0)
	rt := cache.New(http.DefaultTransport, store, cache.Options{OmitHeaders: []string{"Set-Cookie"}})
	get := func(h http.Header) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
		for k, v := range h {
			req.Header[k] = v
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	if first := get(nil); first.Header.Get("Set-Cookie") == "" {
		t.Fatal("the live response lost its Set-Cookie: only the stored copy omits it")
	}
	hit := get(nil)
	if cache.StatusOf(hit) != cache.Fresh || hit.Header.Get("Set-Cookie") != "" {
		t.Errorf("fresh hit: status %q, Set-Cookie %q; want fresh and none", cache.StatusOf(hit), hit.Header.Get("Set-Cookie"))
	}
	// A revalidation's 304 carries Set-Cookie too; it must not be merged into the stored copy.
	revalidated := get(http.Header{"Cache-Control": {"no-cache"}})
	if cache.StatusOf(revalidated) != cache.Revalidated {
		t.Fatalf("status %q, want revalidated", cache.StatusOf(revalidated))
	}
	if again := get(nil); again.Header.Get("Set-Cookie") != "" {
		t.Errorf("Set-Cookie from a 304 was merged into the stored response: %q", again.Header.Get("Set-Cookie"))
	}
	// An entry stored without the option (an older cache directory) is not replayed either.
	plain := cache.New(http.DefaultTransport, store, cache.Options{})
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/old", nil)
	if resp, err := plain.RoundTrip(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	rt = cache.New(http.DefaultTransport, store, cache.Options{OmitHeaders: []string{"Set-Cookie"}})
	req, _ = http.NewRequest(http.MethodGet, srv.URL+"/old", nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if cache.StatusOf(resp) != cache.Fresh || resp.Header.Get("Set-Cookie") != "" {
		t.Errorf("an old entry: status %q, Set-Cookie %q; want fresh and none", cache.StatusOf(resp), resp.Header.Get("Set-Cookie"))
	}
}

// A body sent without a Content-Length (chunked) is stored whole and served back byte for byte,
// each page its own, however the store collected it; one larger than the store keeps per body
// passes through, never cut.
func TestMemoryStoreKeepsChunkedBodiesWhole(t *testing.T) {
	c := newClock()
	srv := newOrigin(t, c, func(w http.ResponseWriter, r *http.Request) string {
		w.Header().Set("Cache-Control", "max-age=600")
		size := 9000
		if r.URL.Path == "/big" {
			size = 20000
		}
		half := strings.Repeat(r.URL.Path[1:2], size/2)
		io.WriteString(w, half)
		w.(http.Flusher).Flush() // the headers go out now, without a Content-Length
		return half
	})
	mem := cache.NewMemoryStore(64000) // at most 16,000 bytes per body
	tr := cache.New(http.DefaultTransport, mem, cache.Options{Now: c.Now})
	for _, path := range []string{"/a", "/b", "/c"} {
		if r := get(t, tr, srv.URL+path); r.status != cache.Miss || r.body != strings.Repeat(path[1:2], 9000) {
			t.Fatalf("first read of %s: %q, %d bytes", path, r.status, len(r.body))
		}
	}
	for _, path := range []string{"/a", "/b", "/c"} {
		if r := get(t, tr, srv.URL+path); r.status != cache.Fresh || r.body != strings.Repeat(path[1:2], 9000) {
			t.Errorf("second read of %s: %q, %d bytes, want fresh and its own 9000 bytes", path, r.status, len(r.body))
		}
	}
	for range 2 {
		if r := get(t, tr, srv.URL+"/big"); r.status != cache.Miss || r.body != strings.Repeat("b", 20000) {
			t.Errorf("a chunked body over the per-body limit: %q, %d bytes; want a miss with the whole body", r.status, len(r.body))
		}
	}
}
