package redisstore_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/hostclock/clocktest"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/redisstore"
	"github.com/politecrawl/etiquette/redisstore/redistest"
)

// What the store does when Redis does not keep what it was given, or is not what the client
// was told: each case either works or fails closed with an error that says what to change.

// storeOf returns a store on client, closed when the test ends.
func storeOf(t *testing.T, client redis.UniversalClient, opts redisstore.Options) *redisstore.Store {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	st, err := redisstore.New(client, opts)
	if err != nil {
		t.Fatalf("redisstore.New: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func acquireOnce(st *redisstore.Store) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	le, err := st.Clock().Acquire(ctx, origin, kind.HTML)
	if err == nil {
		le.Done(hostclock.Outcome{Status: 200})
	}
	return err
}

func TestARedisThatMayEvictIsRefusedUnlessAllowed(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	admin := srv.Client()
	for _, tt := range []struct {
		policy, maxmemory string
		allow             bool
		refused           bool
	}{
		{"volatile-lru", "4mb", false, true}, // the README's old advice: every crawl key has a TTL
		{"allkeys-lru", "4mb", false, true},
		{"volatile-ttl", "4mb", false, true},
		{"allkeys-lru", "4mb", true, false},
		{"noeviction", "4mb", false, false},
		{"allkeys-lru", "0", false, false}, // no memory limit: nothing is evicted
	} {
		if err := admin.ConfigSet(ctx, "maxmemory-policy", tt.policy).Err(); err != nil {
			t.Fatal(err)
		}
		if err := admin.ConfigSet(ctx, "maxmemory", tt.maxmemory).Err(); err != nil {
			t.Fatal(err)
		}
		st := storeOf(t, srv.Client(), redisstore.Options{Clock: authorised(2), AllowEviction: tt.allow})
		err := acquireOnce(st)
		var ee *redisstore.EvictionError
		switch {
		case tt.refused && !errors.As(err, &ee):
			t.Errorf("%s, maxmemory %s: Acquire = %v, want an *EvictionError", tt.policy, tt.maxmemory, err)
		case tt.refused:
			for _, want := range []string{srv.Addr, tt.policy, "noeviction", "Options.CacheClient", "Options.AllowEviction"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the refusal %q does not say %q", err, want)
				}
			}
			if err2 := acquireOnce(st); !errors.As(err2, &ee) {
				t.Errorf("a second Acquire after the refusal = %v, want the refusal again", err2)
			}
		case err != nil:
			t.Errorf("%s, maxmemory %s, AllowEviction %v: Acquire = %v, want a grant", tt.policy, tt.maxmemory, tt.allow, err)
		}
	}
}

func TestARedisWithoutConfigIsUsedWithAWarning(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	// A user who may do everything but CONFIG, as on managed Redis services.
	if err := srv.Client().Do(ctx, "ACL", "SETUSER", "crawler", "on", ">pw", "~*", "&*", "+@all", "-config").Err(); err != nil {
		t.Fatal(err)
	}
	warned := &signalOn{text: "could not read the Redis eviction policy", seen: make(chan struct{})}
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "crawler", Password: "pw"})
	t.Cleanup(func() { client.Close() })
	st := storeOf(t, client, redisstore.Options{Clock: authorised(2), Logger: slog.New(warned)})
	if err := acquireOnce(st); err != nil {
		t.Fatalf("Acquire without CONFIG = %v, want a grant", err)
	}
	select {
	case <-warned.seen:
	default:
		t.Error("no warning that the eviction policy could not be read")
	}
}

func TestARefusedPasswordNamesTheServer(t *testing.T) {
	srv := redistest.Start(t)
	if err := srv.Client().ConfigSet(context.Background(), "requirepass", "right").Err(); err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: "wrong-pass"})
	t.Cleanup(func() { client.Close() })
	st := storeOf(t, client, redisstore.Options{Clock: authorised(2), Wait: time.Second})
	err := acquireOnce(st)
	var ae *redisstore.AuthError
	if !errors.As(err, &ae) {
		t.Fatalf("Acquire with a wrong password = %v, want an *AuthError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "redis://:xxxxx@"+srv.Addr) || strings.Contains(msg, "wrong-pass") {
		t.Errorf("the error %q does not name the server without its password", msg)
	}
}

// An empty restart — Redis killed and started again without its data — forgets every schedule
// and the de-duplication. The next reservation of a process that relied on them says so, and
// from then on the process is refused everything.
func TestAnEmptyRestartIsNoticedByTheNextReservation(t *testing.T) {
	srv := redistest.Start(t)
	a := storeOf(t, srv.Client(), redisstore.Options{Clock: authorised(2)})
	b := storeOf(t, srv.Client(), redisstore.Options{Clock: authorised(2)})
	qa := a.Queue()
	if err := qa.Init(); err != nil {
		t.Fatal(err)
	}
	add(t, qa, origin, entry("http://"+origin+"/"), 0)
	for _, st := range []*redisstore.Store{a, b} {
		if err := acquireOnce(st); err != nil {
			t.Fatalf("Acquire before the restart: %v", err)
		}
	}

	srv.Crash()
	srv.Restart()

	for name, st := range map[string]*redisstore.Store{"a": a, "b": b} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		le, err := st.Clock().Acquire(ctx, origin, kind.HTML)
		cancel()
		if !errors.Is(err, redisstore.ErrStateLost) {
			t.Errorf("process %s: Acquire after an empty restart = %v, %v; want ErrStateLost", name, le, err)
		}
		if err := acquireOnce(st); !errors.Is(err, redisstore.ErrStateLost) {
			t.Errorf("process %s: a second Acquire = %v, want ErrStateLost", name, err)
		}
	}
	if _, err := qa.AddRequest(origin, entry("http://"+origin+"/"), 0); !errors.Is(err, redisstore.ErrCrawlLost) {
		t.Errorf("AddRequest of the URL queued before = %v; want ErrCrawlLost, not a second queueing", err)
	}
}

// The queue notices on its own, without a clock: its first call after the restart fails.
func TestAnEmptyRestartIsNoticedByTheQueue(t *testing.T) {
	srv := redistest.Start(t)
	q := newQueue(t, srv, redisstore.Options{})
	add(t, q, "o.test", entry("http://o.test/"), 0)
	srv.Crash()
	srv.Restart()
	if a, err := q.AddRequest("o.test", entry("http://o.test/"), 0); !errors.Is(err, redisstore.ErrCrawlLost) {
		t.Errorf("AddRequest of a URL accepted before the restart = %v, %v; want ErrCrawlLost", a, err)
	}
}

// A frozen server keeps the connections open and answers nothing: the store gives it up after
// Options.Wait, not after the client's read timeouts and retries.
func TestAFrozenRedisIsGivenUpAfterTheWait(t *testing.T) {
	srv := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { client.Close() })
	st := storeOf(t, client, redisstore.Options{Clock: authorised(2), Wait: time.Second})
	if err := acquireOnce(st); err != nil {
		t.Fatal(err)
	}
	srv.Freeze()
	t.Cleanup(srv.Thaw)
	start := time.Now()
	err := acquireOnce(st)
	took := time.Since(start)
	var ue *redisstore.UnavailableError
	if !errors.As(err, &ue) {
		t.Fatalf("Acquire from a frozen Redis = %v, want an *UnavailableError", err)
	}
	if took > time.Second+2*clocktest.Slack+500*time.Millisecond {
		t.Errorf("a frozen Redis was given up after %v, want about the wait of 1s", took)
	}
}

// A single address that is one node of a cluster is said to be one, rather than failing on
// the first key another node holds.
func TestANodeOfAClusterGivenAsAServerIsSaidToBeOne(t *testing.T) {
	cl := redistest.StartCluster(t)
	st := storeOf(t, cl.Nodes[0].Client(), redisstore.Options{Clock: authorised(2)})
	err := acquireOnce(st)
	var ce *redisstore.ClusterError
	if !errors.As(err, &ce) {
		t.Fatalf("Acquire through one node of a cluster = %v, want a *ClusterError", err)
	}
	if !strings.Contains(err.Error(), "addr=") {
		t.Errorf("the error %q does not say how to list the nodes", err)
	}
}

// The clock's behaviour table on a Redis Cluster of three masters: every script touches one
// slot, and the rules hold as on one server.
func TestRedisClockOnAClusterPassesTheClockTable(t *testing.T) {
	cl := redistest.StartCluster(t)
	clocktest.Run(t, func(t *testing.T, cfg hostclock.Config) hostclock.Clock {
		return storeOf(t, cl.Client(), redisstore.Options{Clock: cfg}).Clock()
	})
}
