package robots

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is the injected time of a Keeper under test.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// origin is an httptest server whose robots.txt answer the test changes as it goes.
type testOrigin struct {
	*httptest.Server
	mu      sync.Mutex
	status  int
	body    string
	header  http.Header
	fetches atomic.Int32
	hold    chan struct{} // when set, robots.txt answers only after it is closed
}

func newTestOrigin(t *testing.T, status int, body string) *testOrigin {
	o := &testOrigin{status: status, body: body}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			http.Error(w, "only robots.txt here", http.StatusTeapot)
			return
		}
		o.fetches.Add(1)
		o.mu.Lock()
		status, body, header, hold := o.status, o.body, o.header.Clone(), o.hold
		o.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		for k, v := range header {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(o.Close)
	return o
}

func (o *testOrigin) set(status int, body string, header http.Header) {
	o.mu.Lock()
	o.status, o.body, o.header = status, body, header
	o.mu.Unlock()
}

func (o *testOrigin) url(t testing.TB, path string) *url.URL { return mustURL(t, o.URL+path) }

var testFetch = ClientFetch(&http.Client{
	CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) > 5 {
			return errors.New("more than 5 redirects")
		}
		return nil
	},
})

const privateRules = "User-agent: *\nDisallow: /private\nSitemap: /sitemap.xml\n"

func TestKeeperStatusRules(t *testing.T) {
	cases := []struct {
		status          int
		outcome         Outcome
		public, private bool
		reasonMentions  string
	}{
		{200, Parsed, true, false, "line 2"},
		{203, Parsed, true, false, "line 2"},
		{404, Unavailable, true, true, "§2.3.1.3"},
		{401, Unavailable, true, true, "answered 401"},
		{403, Unavailable, true, true, "answered 403"},
		{410, Unavailable, true, true, "answered 410"},
		{429, Unreachable, false, false, "answered 429"},
		{500, Unreachable, false, false, "§2.3.1.4"},
		{503, Unreachable, false, false, "robots.txt answered 503: treating the origin as disallowed until"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.status), func(t *testing.T) {
			o := newTestOrigin(t, c.status, privateRules)
			k := NewKeeper(Options{})
			e, err := k.Lookup(context.Background(), o.url(t, "/x"), testFetch)
			if err != nil {
				t.Fatalf("Lookup: %v", err)
			}
			if e.Outcome != c.outcome || e.Status != c.status {
				t.Errorf("outcome %v status %d, want %v %d", e.Outcome, e.Status, c.outcome, c.status)
			}
			pub, priv := e.Decide("FooBot", o.url(t, "/public")), e.Decide("FooBot", o.url(t, "/private/a"))
			if pub.Allowed != c.public || priv.Allowed != c.private {
				t.Errorf("/public allowed %v, /private allowed %v; want %v, %v", pub.Allowed, priv.Allowed, c.public, c.private)
			}
			if !strings.Contains(priv.Reason, c.reasonMentions) {
				t.Errorf("reason %q does not mention %q", priv.Reason, c.reasonMentions)
			}
			if d := e.Decide("FooBot", o.url(t, "/robots.txt")); !d.Allowed {
				t.Errorf("/robots.txt itself disallowed: %s", d.Reason)
			}
		})
	}
}

func TestKeeperFailuresDisallow(t *testing.T) {
	t.Run("network error", func(t *testing.T) {
		o := newTestOrigin(t, 200, privateRules)
		u := o.url(t, "/public")
		o.Close()
		e, err := NewKeeper(Options{}).Lookup(context.Background(), u, testFetch)
		if err != nil {
			t.Fatalf("a failed fetch must give a disallowing entry, not an error: %v", err)
		}
		if d := e.Decide("FooBot", u); d.Allowed || e.Err == nil || !strings.Contains(d.Reason, "could not be fetched") {
			t.Errorf("after a network error: allowed %v, err %v, reason %q", d.Allowed, e.Err, d.Reason)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		o := newTestOrigin(t, 200, privateRules)
		o.hold = make(chan struct{}) // never answers
		defer close(o.hold)
		k := NewKeeper(Options{FetchTimeout: 100 * time.Millisecond})
		e, err := k.Lookup(context.Background(), o.url(t, "/public"), testFetch)
		if err != nil {
			t.Fatalf("Lookup: %v", err)
		}
		if d := e.Decide("FooBot", o.url(t, "/public")); d.Allowed || !errors.Is(e.Err, context.DeadlineExceeded) {
			t.Errorf("after a timeout: allowed %v, err %v", d.Allowed, e.Err)
		}
	})
	t.Run("more than five redirects", func(t *testing.T) {
		var srv *httptest.Server
		srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, srv.URL+"/robots.txt?loop", http.StatusFound)
		}))
		defer srv.Close()
		e, err := NewKeeper(Options{}).Lookup(context.Background(), mustURL(t, srv.URL+"/a"), testFetch)
		if err != nil {
			t.Fatalf("Lookup: %v", err)
		}
		if d := e.Decide("FooBot", mustURL(t, srv.URL+"/a")); d.Allowed || e.Outcome != Unreachable {
			t.Errorf("a redirect loop gave outcome %v, allowed %v; want unreachable, disallowed", e.Outcome, d.Allowed)
		}
	})
	t.Run("five redirects crossing origins are followed", func(t *testing.T) {
		final := newTestOrigin(t, 200, privateRules)
		hops := 0
		var first *httptest.Server
		first = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hops++
			if hops < 5 {
				http.Redirect(w, r, fmt.Sprintf("%s/hop%d", first.URL, hops), http.StatusMovedPermanently)
				return
			}
			http.Redirect(w, r, final.URL+"/robots.txt", http.StatusFound)
		}))
		defer first.Close()
		u := mustURL(t, first.URL+"/private/x")
		e, err := NewKeeper(Options{}).Lookup(context.Background(), u, testFetch)
		if err != nil {
			t.Fatalf("Lookup: %v", err)
		}
		if d := e.Decide("FooBot", u); d.Allowed || e.Outcome != Parsed || hops != 5 {
			t.Errorf("after %d redirects: outcome %v, /private allowed %v; want the final file's rules applied to the first origin", hops, e.Outcome, d.Allowed)
		}
	})
}

func TestKeeperSingleFetchUnderConcurrency(t *testing.T) {
	o := newTestOrigin(t, 200, privateRules)
	o.hold = make(chan struct{})
	k := NewKeeper(Options{})
	var wg sync.WaitGroup
	results := make(chan *Entry, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := k.Lookup(context.Background(), o.url(t, fmt.Sprintf("/page%d", i)), testFetch)
			if err != nil {
				t.Errorf("Lookup: %v", err)
			}
			results <- e
		}()
	}
	// Let every caller reach the keeper before robots.txt answers.
	for o.fetches.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	close(o.hold)
	wg.Wait()
	close(results)
	var first *Entry
	for e := range results {
		if first == nil {
			first = e
		}
		if e != first {
			t.Errorf("callers got different entries")
		}
	}
	if n := o.fetches.Load(); n != 1 {
		t.Errorf("8 concurrent lookups fetched robots.txt %d times, want 1", n)
	}
}

func TestKeeperCancelledCallerDoesNotPoison(t *testing.T) {
	o := newTestOrigin(t, 200, privateRules)
	o.hold = make(chan struct{})
	k := NewKeeper(Options{})

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := k.Lookup(ctx, o.url(t, "/a"), testFetch)
		errc <- err
	}()
	for o.fetches.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	patient := make(chan *Entry, 1)
	go func() {
		e, err := k.Lookup(context.Background(), o.url(t, "/b"), testFetch)
		if err != nil {
			t.Errorf("the patient caller failed: %v", err)
		}
		patient <- e
	}()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled caller got %v, want context.Canceled", err)
	}
	close(o.hold)
	e := <-patient
	if e == nil || e.Outcome != Parsed || !e.Decide("FooBot", o.url(t, "/public")).Allowed {
		t.Fatalf("the patient caller got %+v; the cancelled caller must not fail the fetch", e)
	}
	again, err := k.Lookup(context.Background(), o.url(t, "/c"), testFetch)
	if err != nil || again != e || o.fetches.Load() != 1 {
		t.Errorf("the cached entry was not reused (err %v, fetches %d)", err, o.fetches.Load())
	}
}

func TestKeeperLifetime(t *testing.T) {
	cases := []struct {
		name   string
		header http.Header
		ttl    time.Duration
	}{
		{"max-age", http.Header{"Cache-Control": {"public, max-age=7200"}}, 2 * time.Hour},
		{"max-age less Age", http.Header{"Cache-Control": {"max-age=7200"}, "Age": {"1800"}}, 90 * time.Minute},
		{"max-age=0 is raised to the floor", http.Header{"Cache-Control": {"max-age=0"}}, time.Hour},
		{"no-cache is raised to the floor", http.Header{"Cache-Control": {"no-cache"}}, time.Hour},
		{"a week is cut to a day", http.Header{"Cache-Control": {"max-age=604800"}}, 24 * time.Hour},
		{"Expires", http.Header{"Date": {"Sun, 01 Mar 2026 12:00:00 GMT"}, "Expires": {"Sun, 01 Mar 2026 15:00:00 GMT"}}, 3 * time.Hour},
		{"invalid Expires", http.Header{"Expires": {"0"}}, time.Hour},
		{"no freshness given", nil, 24 * time.Hour},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := newTestOrigin(t, 200, "User-agent: *\nDisallow: /v1\n")
			o.set(200, "User-agent: *\nDisallow: /v1\n", c.header)
			clk := newFakeClock()
			k := NewKeeper(Options{Now: clk.Now})
			e1, _ := k.Lookup(context.Background(), o.url(t, "/"), testFetch)
			if got := e1.Expires.Sub(e1.Fetched); got != c.ttl {
				t.Errorf("lifetime %v, want %v", got, c.ttl)
			}
			o.set(200, "User-agent: *\nDisallow: /v2\n", nil)
			clk.Advance(c.ttl - time.Second)
			e2, _ := k.Lookup(context.Background(), o.url(t, "/"), testFetch)
			if e2 != e1 || o.fetches.Load() != 1 {
				t.Fatalf("refetched before the lifetime ended (fetches %d)", o.fetches.Load())
			}
			clk.Advance(time.Second)
			e3, _ := k.Lookup(context.Background(), o.url(t, "/"), testFetch)
			if o.fetches.Load() != 2 {
				t.Fatalf("not refetched when the lifetime ended (fetches %d)", o.fetches.Load())
			}
			if e3.Decide("b", o.url(t, "/v1")).Allowed != true || e3.Decide("b", o.url(t, "/v2")).Allowed != false {
				t.Errorf("the changed robots.txt did not change the decisions")
			}
		})
	}
}

func TestKeeperRefreshFailureKeepsLastGoodCopy(t *testing.T) {
	o := newTestOrigin(t, 200, privateRules)
	clk := newFakeClock()
	k := NewKeeper(Options{Now: clk.Now})
	lookup := func() *Entry {
		t.Helper()
		e, err := k.Lookup(context.Background(), o.url(t, "/"), testFetch)
		if err != nil {
			t.Fatalf("Lookup: %v", err)
		}
		return e
	}
	good := lookup()
	o.set(503, "down", nil)
	clk.Advance(25 * time.Hour)
	stale := lookup()
	if !stale.Stale || stale.File != good.File || stale.Status != 503 {
		t.Fatalf("after a 503 refresh: stale %v, same file %v, status %d", stale.Stale, stale.File == good.File, stale.Status)
	}
	pub, priv := stale.Decide("b", o.url(t, "/public")), stale.Decide("b", o.url(t, "/private"))
	if !pub.Allowed || priv.Allowed || !strings.Contains(priv.Reason, "§2.4") {
		t.Errorf("the last good copy is not in force: /public %v, /private %v (%s)", pub.Allowed, priv.Allowed, priv.Reason)
	}
	if got := stale.Sitemaps(); len(got) != 1 || got[0] != o.URL+"/sitemap.xml" {
		t.Errorf("Sitemaps of the stale entry = %q", got)
	}
	clk.Advance(DefaultRetryFailedAfter - time.Second)
	lookup()
	if n := o.fetches.Load(); n != 2 {
		t.Errorf("retried a failed refresh before %v (fetches %d)", DefaultRetryFailedAfter, n)
	}
	clk.Advance(time.Second)
	o.set(503, "still down", nil)
	again := lookup()
	if n := o.fetches.Load(); n != 3 || !again.Stale || again.Good != good.Good {
		t.Errorf("second failed refresh: fetches %d, stale %v, good copy from %v (want %v)", n, again.Stale, again.Good, good.Good)
	}
	clk.Advance(DefaultRetryFailedAfter)
	o.set(404, "", nil)
	gone := lookup()
	if gone.Stale || gone.File != nil || !gone.Decide("b", o.url(t, "/private")).Allowed {
		t.Errorf("a 404 after the outage must replace the old copy with allow-all")
	}
}

func TestKeeperNoGoodCopyDisallowsUntilSuccess(t *testing.T) {
	o := newTestOrigin(t, 500, "")
	clk := newFakeClock()
	k := NewKeeper(Options{Now: clk.Now, RetryFailedAfter: 10 * time.Second})
	e, _ := k.Lookup(context.Background(), o.url(t, "/"), testFetch)
	if e.Decide("b", o.url(t, "/public")).Allowed {
		t.Fatalf("a 500 without a good copy allowed a page")
	}
	o.set(200, privateRules, nil)
	clk.Advance(9 * time.Second)
	if e, _ := k.Lookup(context.Background(), o.url(t, "/"), testFetch); e.Decide("b", o.url(t, "/public")).Allowed || o.fetches.Load() != 1 {
		t.Fatalf("retried before RetryFailedAfter (fetches %d)", o.fetches.Load())
	}
	clk.Advance(time.Second)
	e, _ = k.Lookup(context.Background(), o.url(t, "/"), testFetch)
	if !e.Decide("b", o.url(t, "/public")).Allowed || o.fetches.Load() != 2 {
		t.Errorf("not allowed after a successful retry (fetches %d)", o.fetches.Load())
	}
}

// countingBody counts what the keeper reads of a body.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func TestKeeperReadsAtMostTheLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "User-agent: *\nDisallow: /private\n")
		line := []byte(strings.Repeat("#", 1023) + "\n")
		for range 50 << 10 { // 50 MB
			if _, err := w.Write(line); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	var read atomic.Int64
	fetch := func(ctx context.Context, u string) (*http.Response, error) {
		resp, err := testFetch(ctx, u)
		if resp != nil {
			resp.Body = countingBody{resp.Body, &read}
		}
		return resp, err
	}
	e, err := NewKeeper(Options{}).Lookup(context.Background(), mustURL(t, srv.URL+"/"), fetch)
	if err != nil {
		t.Fatalf("Lookup: %v", err)
	}
	if !e.File.Truncated || e.Decide("b", mustURL(t, srv.URL+"/private")).Allowed {
		t.Errorf("a 50 MB robots.txt: truncated %v; its first rule must apply", e.File.Truncated)
	}
	if n := read.Load(); n > MaxBytes+1+drainLimit {
		t.Errorf("read %d bytes of a 50 MB body, want at most %d", n, MaxBytes+1+drainLimit)
	}
}

func TestKeeperBadCalls(t *testing.T) {
	var k Keeper // the zero value is usable
	for _, raw := range []string{"/relative", "mailto:a@b.example", "ftp://h.example/x"} {
		if _, err := k.Lookup(context.Background(), mustURL(t, raw), testFetch); err == nil {
			t.Errorf("Lookup(%q) gave no error", raw)
		}
	}
	if _, err := k.Lookup(context.Background(), nil, testFetch); err == nil {
		t.Errorf("Lookup(nil) gave no error")
	}
	if _, err := k.Lookup(context.Background(), mustURL(t, "http://h.example/"), nil); err == nil {
		t.Errorf("Lookup without a Fetch gave no error")
	}
	var zero *Entry
	if zero.Decide("b", mustURL(t, "http://h.example/x")).Allowed {
		t.Errorf("a nil entry allowed a page")
	}
}

func TestKeeperForgetAndCached(t *testing.T) {
	o := newTestOrigin(t, 200, privateRules)
	k := NewKeeper(Options{})
	if _, ok := k.Cached(o.url(t, "/")); ok {
		t.Fatalf("an unused keeper holds an entry")
	}
	e, _ := k.Lookup(context.Background(), o.url(t, "/a"), testFetch)
	if c, ok := k.Cached(o.url(t, "/b")); !ok || c != e {
		t.Errorf("Cached did not return the entry of the origin")
	}
	k.Forget(o.url(t, "/"))
	k.Lookup(context.Background(), o.url(t, "/a"), testFetch)
	if n := o.fetches.Load(); n != 2 {
		t.Errorf("after Forget, fetches = %d, want 2", n)
	}
}

func TestDisallowedError(t *testing.T) {
	f := Parse([]byte("User-agent: FooBot\n\nDisallow: /secret # keep out\n"))
	u := mustURL(t, "https://h.example/secret/x")
	var err error = &DisallowedError{URL: u.String(), Token: "FooBot", Decision: f.Decide("FooBot", u)}
	err = &url.Error{Op: "Get", URL: u.String(), Err: fmt.Errorf("robots.txt for %s: %w", u, err)}
	var de *DisallowedError
	if !errors.As(err, &de) || !errors.Is(err, ErrDisallowed) {
		t.Fatalf("errors.As/Is cannot find the DisallowedError in %v", err)
	}
	msg := de.Error()
	for _, want := range []string{"line 3", `"Disallow: /secret # keep out"`, "FooBot", u.String()} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not name %s", msg, want)
		}
	}
}

func TestKeeperBoundsItsOrigins(t *testing.T) {
	clk := newFakeClock()
	k := NewKeeper(Options{Now: clk.Now, MaxOrigins: 10})
	fetch := func(ctx context.Context, u string) (*http.Response, error) {
		return &http.Response{StatusCode: 404, Body: io.NopCloser(strings.NewReader("")), Header: http.Header{}}, nil
	}
	lookup := func(i int) *Entry {
		e, err := k.Lookup(context.Background(), mustURL(t, fmt.Sprintf("https://h%d.example/", i)), fetch)
		if err != nil {
			t.Fatalf("Lookup: %v", err)
		}
		return e
	}
	for i := range 10 {
		lookup(i)
	}
	clk.Advance(25 * time.Hour) // the first ten are expired now
	for i := 10; i < 15; i++ {
		lookup(i)
	}
	k.mu.Lock()
	n := len(k.entries)
	k.mu.Unlock()
	if n != 5 {
		t.Errorf("held %d origins after expiry, want the 5 fresh ones", n)
	}
	for i := 15; i < 40; i++ {
		lookup(i)
	}
	k.mu.Lock()
	n = len(k.entries)
	k.mu.Unlock()
	if n > 10 {
		t.Errorf("held %d origins, want at most 10", n)
	}
	if _, ok := k.Cached(mustURL(t, "https://h39.example/")); !ok {
		t.Errorf("the origin just fetched was evicted")
	}
}
