package redisstore_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/robots"
	"github.com/politecrawl/etiquette/redisstore"
	"github.com/politecrawl/etiquette/redisstore/redistest"
)

const rules = "User-agent: *\nDisallow: /private/\nCrawl-delay: 2\nSitemap: /sitemap.xml\n"

// robotsSite serves a robots.txt the test sets and counts its fetches; hold, when set, keeps the
// answer back until it is closed.
type robotsSite struct {
	*httptest.Server
	fetches atomic.Int32
	fetched chan struct{} // one value per fetch

	mu     sync.Mutex
	status int
	body   string
	hold   chan struct{}
}

func newRobotsSite(t *testing.T, status int, body string) *robotsSite {
	s := &robotsSite{status: status, body: body, fetched: make(chan struct{}, 16)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		s.fetched <- struct{}{}
		s.mu.Lock()
		status, body, hold := s.status, s.body, s.hold
		s.mu.Unlock()
		if hold != nil {
			<-hold
		}
		w.Header().Set("ETag", `"r1"`)
		w.Header().Set("Last-Modified", "Mon, 30 Nov 2026 08:00:00 GMT")
		w.Header().Set("Cache-Control", "max-age=7200")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *robotsSite) set(status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body = status, body
}

func (s *robotsSite) page(t *testing.T, path string) *url.URL {
	u, err := url.Parse(s.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// clock is a keeper's time that moves when the test says so, from the real now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

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

func keeper(t *testing.T, srv *redistest.Server, now func() time.Time) (*robots.Keeper, *redisstore.RobotsStore) {
	st := newStore(t, srv, redisstore.Options{}).Robots()
	return robots.NewKeeper(robots.Options{Store: st, Now: now}), st
}

func lookup(t *testing.T, k *robots.Keeper, u *url.URL) *robots.Entry {
	t.Helper()
	e, err := k.Lookup(context.Background(), u, robots.ClientFetch(http.DefaultClient))
	if err != nil {
		t.Fatalf("Lookup: %v", err)
	}
	return e
}

func TestRobotsTxtIsFetchedOnceForEveryProcess(t *testing.T) {
	srv := redistest.Start(t)
	site := newRobotsSite(t, 200, rules)
	hold := make(chan struct{})
	site.hold = hold
	a, _ := keeper(t, srv, nil)
	b, bStore := keeper(t, srv, nil)
	waiting := make(chan struct{}, 16)
	redisstore.OnLockWait(bStore, func(string) { waiting <- struct{}{} })

	results := make(chan *robots.Entry, 2)
	go func() { results <- lookup(t, a, site.page(t, "/")) }()
	<-site.fetched // the first process is fetching
	go func() { results <- lookup(t, b, site.page(t, "/")) }()
	<-waiting // the second waits for it instead of fetching
	close(hold)
	for range 2 {
		if e := <-results; e.Decide("FooBot", site.page(t, "/private/x")).Allowed {
			t.Errorf("a process got %+v, want the parsed rules in force", e)
		}
	}
	if n := site.fetches.Load(); n != 1 {
		t.Errorf("two processes fetched robots.txt %d times, want once", n)
	}
}

func TestTheSharedCopyKeepsItsFetchTimeOutcomeAndValidators(t *testing.T) {
	srv := redistest.Start(t)
	site := newRobotsSite(t, 200, rules)
	a, _ := keeper(t, srv, nil)
	_, bStore := keeper(t, srv, nil)
	mine := lookup(t, a, site.page(t, "/"))
	theirs := bStore.Load(mine.Origin)
	if theirs == nil {
		t.Fatal("the other process found no entry")
	}
	if theirs.Outcome != robots.Parsed || theirs.Status != 200 || !theirs.Fetched.Equal(mine.Fetched) ||
		!theirs.Expires.Equal(mine.Expires) || !theirs.Good.Equal(mine.Good) || theirs.ETag != `"r1"` ||
		theirs.LastModified != "Mon, 30 Nov 2026 08:00:00 GMT" || theirs.URL != mine.URL {
		t.Errorf("the other process has %+v, want %+v", theirs, mine)
	}
	if d, _ := theirs.CrawlDelay("FooBot"); d != 2*time.Second {
		t.Errorf("Crawl-delay from the shared copy = %v, want 2s", d)
	}
	if got := theirs.Sitemaps(); len(got) != 1 || got[0] != site.URL+"/sitemap.xml" {
		t.Errorf("Sitemaps of the shared copy = %q", got)
	}
	if d := theirs.Decide("FooBot", site.page(t, "/private/x")); d.Allowed || d.Line != 2 {
		t.Errorf("the shared copy decides %+v, want line 2 disallowing", d)
	}
}

func TestTheLastGoodCopyStaysInForceForEveryProcess(t *testing.T) {
	srv := redistest.Start(t)
	site := newRobotsSite(t, 200, rules)
	clk := &clock{now: time.Now()}
	a, _ := keeper(t, srv, clk.Now)
	b, _ := keeper(t, srv, clk.Now)
	lookup(t, a, site.page(t, "/"))
	clk.Advance(25 * time.Hour)
	site.set(503, "")
	e := lookup(t, b, site.page(t, "/"))
	if d := e.Decide("FooBot", site.page(t, "/private/x")); !e.Stale || d.Allowed {
		t.Errorf("after another process's refresh failed: stale %v, decision %+v; want the first process's copy in force", e.Stale, d)
	}
	if n := site.fetches.Load(); n != 2 {
		t.Errorf("robots.txt fetched %d times, want twice (once, and the failed refresh)", n)
	}
}

func TestAnUnreachableRobotsTxtDisallowsEveryProcess(t *testing.T) {
	srv := redistest.Start(t)
	site := newRobotsSite(t, 503, "")
	a, _ := keeper(t, srv, nil)
	b, _ := keeper(t, srv, nil)
	for _, k := range []*robots.Keeper{a, b} {
		if d := lookup(t, k, site.page(t, "/")).Decide("FooBot", site.page(t, "/page")); d.Allowed {
			t.Errorf("a page allowed while robots.txt answers 503: %+v", d)
		}
	}
	if n := site.fetches.Load(); n != 1 {
		t.Errorf("robots.txt fetched %d times, want once: the failure is shared until it is retried", n)
	}
}

func TestAFetcherThatDiedHoldsUpTheOthersOnlyUntilItsLockExpires(t *testing.T) {
	srv := redistest.Start(t)
	opts := redisstore.Options{LeaseExpiry: 600 * time.Millisecond}
	dying := newStore(t, srv, opts)
	if _, err := dying.Robots().Lock(context.Background(), "http://o.test"); err != nil {
		t.Fatal(err)
	}
	diedAt := time.Now()
	dying.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	unlock, err := newStore(t, srv, opts).Robots().Lock(ctx, "http://o.test")
	if err != nil {
		t.Fatalf("Lock after the holder died: %v", err)
	}
	unlock()
	if d := time.Since(diedAt); d < opts.LeaseExpiry/2 || d > opts.LeaseExpiry+2*time.Second {
		t.Errorf("the lock came free %v after its holder died, want about its expiry of %v", d, opts.LeaseExpiry)
	}
}

func TestAnOlderEntryNeverReplacesANewerOne(t *testing.T) {
	srv := redistest.Start(t)
	_, a := keeper(t, srv, nil)
	_, b := keeper(t, srv, nil)
	now := time.Now()
	newer := &robots.Entry{Origin: "http://o.test", URL: "http://o.test/robots.txt", Outcome: robots.Unavailable, Status: 404,
		Fetched: now, Expires: now.Add(time.Hour)}
	older := &robots.Entry{Origin: "http://o.test", URL: "http://o.test/robots.txt", Outcome: robots.Unreachable, Status: 503,
		Fetched: now.Add(-time.Minute), Expires: now.Add(time.Hour)}
	a.Save(newer)
	b.Save(older)
	if e := newStore(t, srv, redisstore.Options{}).Robots().Load("http://o.test"); e == nil || e.Status != 404 {
		t.Errorf("Load = %+v, want the entry fetched later", e)
	}
}

func TestAnUnreadableStoredEntryIsFetchedAgain(t *testing.T) {
	srv := redistest.Start(t)
	site := newRobotsSite(t, 200, rules)
	a, _ := keeper(t, srv, nil)
	e := lookup(t, a, site.page(t, "/"))
	keys := srv.Client().Keys(context.Background(), redisstore.Namespace+"*:robots:*").Val()
	if len(keys) != 1 {
		t.Fatalf("robots keys %v", keys)
	}
	srv.Client().Set(context.Background(), keys[0], "garbage", time.Hour)
	if got := newStore(t, srv, redisstore.Options{}).Robots().Load(e.Origin); got != nil {
		t.Errorf("Load of a damaged entry = %+v, want nil (fetch again)", got)
	}
}
