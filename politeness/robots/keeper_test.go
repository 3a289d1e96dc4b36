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
	arrived chan struct{} // receives one value per robots.txt request (buffered; see awaitFetch)
}

func newTestOrigin(t *testing.T, status int, body string) *testOrigin {
	o := &testOrigin{status: status, body: body, arrived: make(chan struct{}, 64)}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			http.Error(w, "only robots.txt here", http.StatusTeapot)
			return
		}
		o.fetches.Add(1)
		select {
		case o.arrived <- struct{}{}:
		default:
		}
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

// awaitFetch waits until robots.txt has been requested.
func (o *testOrigin) awaitFetch(t *testing.T) {
	t.Helper()
	select {
	case <-o.arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("robots.txt was never requested")
	}
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

// loadCounter is a MemoryStore that reports each Load, so a test can tell that every caller has
// looked for the entry (and is now waiting for the one fetch) without guessing with a sleep.
type loadCounter struct {
	*MemoryStore
	loads chan struct{}
}

func (l loadCounter) Load(origin string) *Entry {
	e := l.MemoryStore.Load(origin)
	l.loads <- struct{}{}
	return e
}

func TestKeeperSingleFetchUnderConcurrency(t *testing.T) {
	o := newTestOrigin(t, 200, privateRules)
	o.hold = make(chan struct{})
	store := loadCounter{NewMemoryStore(0), make(chan struct{}, 64)}
	k := NewKeeper(Options{Store: store})
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
	// Every caller has found no entry (8 loads, plus the fetching refresh's own) and the fetch
	// has started before robots.txt answers.
	for range 9 {
		<-store.loads
	}
	o.awaitFetch(t)
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
	o.awaitFetch(t)
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
	store := k.store().(*MemoryStore)
	held := func() int {
		store.mu.Lock()
		defer store.mu.Unlock()
		return len(store.entries)
	}
	if n := held(); n != 5 {
		t.Errorf("held %d origins after expiry, want the 5 fresh ones", n)
	}
	for i := 15; i < 40; i++ {
		lookup(i)
	}
	if n := held(); n > 10 {
		t.Errorf("held %d origins, want at most 10", n)
	}
	if store.Load("https://h39.example") == nil {
		t.Errorf("the origin just fetched was evicted")
	}
}

// TestUnreachableRobotsTxtIsNotWordedAsARule: when robots.txt cannot be read, the refusal keeps
// its type (the CLI counts it as a robots refusal) but says what went wrong, not that a rule
// forbids the page; a real rule keeps the rule's wording.
func TestUnreachableRobotsTxtIsNotWordedAsARule(t *testing.T) {
	refused := newTestOrigin(t, 200, privateRules)
	refusedURL := refused.url(t, "/page")
	refused.Close()
	down := newTestOrigin(t, 503, "")
	rules := newTestOrigin(t, 200, privateRules)
	for _, tc := range []struct {
		name      string
		u         *url.URL
		cause     string
		wantStart string
		unwanted  string
	}{
		{"connection refused", refusedURL, "connection refused", "robots.txt unreachable (", "disallows"},
		{"503", down.url(t, "/page"), "answered 503", "robots.txt unreachable (answered 503)", "disallows"},
		{"a rule", rules.url(t, "/private/x"), "", "robots.txt disallows " + rules.URL + "/private/x", "unreachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := NewKeeper(Options{}).Lookup(context.Background(), tc.u, testFetch)
			if err != nil {
				t.Fatalf("Lookup: %v", err)
			}
			d := e.Decide("FooBot", tc.u)
			if d.Allowed {
				t.Fatalf("allowed: %s", d.Reason)
			}
			if !strings.Contains(d.Cause, tc.cause) || (tc.cause == "") != (d.Cause == "") {
				t.Errorf("Decision.Cause = %q, want one naming %q", d.Cause, tc.cause)
			}
			msg := (&DisallowedError{URL: tc.u.String(), Token: "FooBot", Decision: d}).Error()
			if !strings.HasPrefix(msg, tc.wantStart) || strings.Contains(msg, tc.unwanted) {
				t.Errorf("error %q: want it to start with %q and not to say %q", msg, tc.wantStart, tc.unwanted)
			}
			if tc.cause != "" && !strings.HasSuffix(msg, "; nothing is fetched from this origin until it can be read") {
				t.Errorf("error %q does not say what happens next", msg)
			}
		})
	}
}

// TestKeeperCountsTheAgeOfACachedCopy: a robots.txt answered from a cache arrives with an Age;
// the keeper's 24-hour limit counts from when the origin sent it, not from when the keeper
// received it (RFC 9309 §2.4).
func TestKeeperCountsTheAgeOfACachedCopy(t *testing.T) {
	for _, tc := range []struct {
		name string
		age  string
		want time.Duration
	}{
		{"fresh from the origin", "", 24 * time.Hour},
		{"20 h old in a cache", "72000", 4 * time.Hour},
		{"30 h old (served while the origin is unreachable)", "108000", DefaultRetryFailedAfter},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{"Cache-Control": {"max-age=31536000"}}
			if tc.age != "" {
				h.Set("Age", tc.age)
			}
			o := newTestOrigin(t, 200, privateRules)
			o.set(200, privateRules, h)
			clk := newFakeClock()
			e, err := NewKeeper(Options{Now: clk.Now}).Lookup(context.Background(), o.url(t, "/"), testFetch)
			if err != nil {
				t.Fatalf("Lookup: %v", err)
			}
			if got := e.Expires.Sub(e.Fetched); got != tc.want {
				t.Errorf("kept for %v, want %v", got, tc.want)
			}
		})
	}
}

// sharedStore stands in for a store several processes share (Redis, say): it keeps entries as
// plain data, the way such a store serialises them — File dropped and rebuilt from Body, Err kept
// as text — and lets one process at a time fetch an origin (Locker).
type sharedStore struct {
	mu      sync.Mutex
	saved   map[string]Entry
	lock    sync.Mutex
	locking chan struct{} // receives one value per Lock call
}

func (s *sharedStore) Load(origin string) *Entry {
	s.mu.Lock()
	e, ok := s.saved[origin]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	if e.Body != nil {
		e.File = Parse(e.Body)
	}
	return &e
}

func (s *sharedStore) Save(e *Entry) {
	c := *e
	c.File = nil
	if c.Err != nil {
		c.Err = errors.New(c.Err.Error())
	}
	s.mu.Lock()
	if s.saved == nil {
		s.saved = map[string]Entry{}
	}
	s.saved[e.Origin] = c
	s.mu.Unlock()
}

func (s *sharedStore) Lock(ctx context.Context, origin string) (func(), error) {
	s.locking <- struct{}{}
	s.lock.Lock()
	return s.lock.Unlock, nil
}

// TestKeepersSharingAStore: two keepers (two processes) on one store fetch an origin's
// robots.txt once, and the lifecycle holds across them: the copy one fetched is the last good
// copy the other keeps in force when its refresh fails.
func TestKeepersSharingAStore(t *testing.T) {
	o := newTestOrigin(t, 200, privateRules)
	o.hold = make(chan struct{})
	clk := newFakeClock()
	store := &sharedStore{locking: make(chan struct{}, 8)}
	a, b := NewKeeper(Options{Now: clk.Now, Store: store}), NewKeeper(Options{Now: clk.Now, Store: store})

	results := make(chan *Entry, 2)
	for _, k := range []*Keeper{a, b} {
		go func() {
			e, err := k.Lookup(context.Background(), o.url(t, "/page"), testFetch)
			if err != nil {
				t.Errorf("Lookup: %v", err)
			}
			results <- e
		}()
	}
	// One keeper is fetching, the other waits for the lock: without it, it would fetch too.
	o.awaitFetch(t)
	<-store.locking
	<-store.locking
	close(o.hold)
	for range 2 {
		if e := <-results; e == nil || e.Decide("FooBot", o.url(t, "/private/x")).Allowed {
			t.Fatalf("a keeper got %+v; want the parsed file in force", e)
		}
	}
	if n := o.fetches.Load(); n != 1 {
		t.Errorf("two keepers sharing a store fetched robots.txt %d times, want 1", n)
	}

	clk.Advance(25 * time.Hour)
	o.set(503, "", nil)
	e, err := b.Lookup(context.Background(), o.url(t, "/page"), testFetch)
	if err != nil {
		t.Fatal(err)
	}
	d := e.Decide("FooBot", o.url(t, "/private/x"))
	if !e.Stale || d.Allowed || d.Line != 2 {
		t.Errorf("after a failed refresh: stale %v, /private allowed %v (line %d); want the copy the other keeper fetched", e.Stale, d.Allowed, d.Line)
	}
	if got := e.Sitemaps(); len(got) != 1 || got[0] != o.URL+"/sitemap.xml" {
		t.Errorf("Sitemaps of the shared copy = %q", got)
	}
}
