// Package redisstore shares a crawl's politeness state through Redis — one server or a Redis
// Cluster — so that several processes — on one machine or many — crawl as one crawler: one start budget per origin (3
// starts per second, 2 in flight, counted across all of them), one robots.txt fetch per origin,
// one reading of each origin's discovery documents, one queue of URLs with one de-duplication,
// and one cache.
//
// [New] hands out the pieces, all on one client (a *redis.Client, or a *redis.ClusterClient for a
// cluster), for the fields the door and the frontier already take:
//
//	st, err := redisstore.New(client, redisstore.Options{Crawl: "news-2026-12"})
//	err = st.Check(ctx)                                                  // refuses a Redis that may evict the crawl's state
//	defer st.Close()
//	policy.Clock = st.Clock()                                            // hostclock.Clock
//	policy.Robots = robots.NewKeeper(robots.Options{Store: st.Robots()}) // robots.Store and robots.Locker
//	policy.CacheStore = st.Cache(diskStore)                              // cache.Store; large bodies stay on disk
//	frontier.New(frontier.Options{Storage: st.Queue(), Pacer: policy.Clock})
//	crawler.Config{DiscoveryClaims: st.Discovery(), …}                  // plan.Claims: one process discovers an origin
//
// The state that belongs to an origin (its budget, pauses, Crawl-delay floors, robots.txt, the
// cache) lives in one fixed namespace ([Namespace]) shared by every crawl on that Redis; the
// queue and the give-ups of one crawl live under its own prefix ([CrawlPrefix]). See keys.go for
// the layout. Every key of one origin carries the origin as a hash tag, so each script touches
// one slot of a cluster.
//
// Redis must keep what it is given: a maxmemory-policy that may evict keys (every key of the
// crawl carries an expiry) is refused by [Store.Check] unless Options.AllowEviction says
// otherwise, and a restart that lost the data is noticed by the next reservation of every
// process ([ErrStateLost]), which then sends nothing more.
//
// Redis unreachable fails closed: nothing that needs it is granted, every operation retries for
// up to Options.Wait, then fails with an [*UnavailableError]. There is no fallback to a
// per-process budget, which would multiply the load on every site by the number of processes.
package redisstore

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/etiquette/internal/quietlog"
	"github.com/politecrawl/etiquette/politeness/hostclock"
)

// Defaults of [Options].
const (
	// DefaultWait is how long an operation retries while Redis cannot be reached.
	DefaultWait = 30 * time.Second
	// DefaultLeaseExpiry is how long a start slot, or a URL handed out, stays held by a process
	// that stopped renewing it: a process that died frees its places within this time.
	DefaultLeaseExpiry = 30 * time.Second
	// DefaultCrawlIdle is how long a crawl's queue and de-duplication set outlive the crawl's last
	// activity: long enough to resume a crawl after a crash, short enough that running the same
	// crawl again the next day starts afresh.
	DefaultCrawlIdle = 24 * time.Hour
	// DefaultCrawl names the crawl when Options.Crawl and Options.Prefix are empty.
	DefaultCrawl = "default"
)

// Options configures [New]. The zero value shares the default budget (hostclock's defaults) and
// names the crawl "default".
type Options struct {
	// Crawl names the crawl whose queue and give-ups the processes share: the keys live under
	// CrawlPrefix(Crawl). "" means DefaultCrawl.
	Crawl string
	// Prefix replaces CrawlPrefix(Crawl) as the crawl's key prefix. It must not contain '{' or
	// '}', which Redis Cluster reads as a hash tag.
	Prefix string
	// Clock configures the start budget exactly as for hostclock.NewLocal (rate, authorised
	// rates, concurrency, backoff, …), except that Clock.Time must be nil: the schedule runs on
	// the Redis server's clock, so the processes' own clocks may disagree. Give every process of
	// a crawl the same configuration.
	Clock hostclock.Config
	// Wait is how long an operation keeps retrying while Redis cannot be reached before it fails
	// with an *UnavailableError; 0 means DefaultWait.
	Wait time.Duration
	// LeaseExpiry is how long a process's start slots, URLs handed out and robots.txt lock stay
	// held after it stops renewing them (it renews them every third of it); 0 means
	// DefaultLeaseExpiry.
	LeaseExpiry time.Duration
	// CrawlIdle is how long the crawl's keys outlive its last activity; 0 means DefaultCrawlIdle.
	CrawlIdle time.Duration
	// MaxCacheBody is the largest body the shared cache keeps in Redis; larger ones go to the
	// fallback store given to Cache. 0 means DefaultMaxCacheBody.
	MaxCacheBody int64
	// CacheTTL is how long a cached response stays in Redis after it was last stored; 0 means
	// DefaultCacheTTL.
	CacheTTL time.Duration
	// CacheClient, when set, keeps the shared cache in a Redis of its own, which may evict
	// (allkeys-lru is the usual choice for a cache); nil keeps the cache in the crawl's Redis,
	// where nothing may be evicted, so that the cache's entries count against its memory until
	// they expire (CacheTTL). Store.Check does not judge its eviction policy. The client stays
	// the caller's.
	CacheClient redis.UniversalClient
	// AllowEviction accepts a Redis whose maxmemory-policy may evict the crawl's keys. Under
	// memory pressure that forgets start schedules, leases, queued URLs and the de-duplication:
	// requests start closer together than the budget, and pages are fetched again. Every
	// process stops once it notices a loss (ErrStateLost), but an eviction may remove a key
	// that no process checks in time. Leave it false unless the server is sized so that it
	// never evicts.
	AllowEviction bool
	// Logger receives outages (Warn), their end (Info), reclaimed leases and URLs (Warn); nil
	// means warnings and errors only, on slog.Default().
	Logger *slog.Logger
}

// Store is the shared state of a crawl in Redis (one server or a cluster), and the source of its pieces:
// [Store.Clock], [Store.Queue], [Store.Cache] and [Store.Robots]. Create it with [New] and Close it
// when the process is done; the zero value is not usable. It is safe for concurrent use.
type Store struct {
	client redis.UniversalClient
	cache  redis.UniversalClient // Options.CacheClient, else client
	opts   Options               // defaults filled in
	prefix string
	log    *slog.Logger
	url    string // the server, without its password

	reach *reach

	checkMu sync.Mutex
	checked bool  // Check found the server fit
	refused error // what Check refused for good
	lost    atomic.Pointer[LostError]

	id string // this process's, in lease ids

	clockOnce     sync.Once
	clock         *Clock
	queueOnce     sync.Once
	queue         *Queue
	robotsOnce    sync.Once
	robots        *RobotsStore
	discoveryOnce sync.Once
	discovery     *DiscoveryClaims

	beat *heartbeat
}

// New returns the store of client: a *redis.Client for one server, a *redis.ClusterClient for a
// cluster. It checks the options but does not talk to Redis: an unreachable server shows in
// the first operation, which waits for it up to Options.Wait; the first operation also runs
// [Store.Check] unless the caller did. The client stays the caller's: Close does not close it.
//
// Give the client ContextTimeoutEnabled: true, so that a server that stops answering without
// closing its connections (frozen, or a network that drops packets) is given up after
// Options.Wait; without it each attempt waits for the client's ReadTimeout, times its
// MaxRetries, before the store can count it.
func New(client redis.UniversalClient, opts Options) (*Store, error) {
	if client == nil {
		return nil, errors.New("redisstore: nil client; pass redis.NewClient(opts) or, for a cluster, redis.NewClusterClient(opts)")
	}
	if opts.Clock.Time != nil {
		return nil, errors.New("redisstore: Options.Clock.Time must be nil: the shared schedule runs on the Redis server's clock")
	}
	cfg, err := opts.Clock.Resolved()
	if err != nil {
		return nil, fmt.Errorf("redisstore: Options.Clock: %w", err)
	}
	opts.Clock = cfg
	if opts.Wait < 0 || opts.LeaseExpiry < 0 || opts.CrawlIdle < 0 || opts.MaxCacheBody < 0 || opts.CacheTTL < 0 {
		return nil, errors.New("redisstore: Options.Wait, LeaseExpiry, CrawlIdle, MaxCacheBody and CacheTTL must not be negative; use 0 for the defaults")
	}
	opts.Wait = cmp.Or(opts.Wait, DefaultWait)
	opts.LeaseExpiry = cmp.Or(opts.LeaseExpiry, DefaultLeaseExpiry)
	opts.CrawlIdle = cmp.Or(opts.CrawlIdle, DefaultCrawlIdle)
	opts.MaxCacheBody = cmp.Or(opts.MaxCacheBody, DefaultMaxCacheBody)
	opts.CacheTTL = cmp.Or(opts.CacheTTL, DefaultCacheTTL)
	opts.Crawl = cmp.Or(opts.Crawl, DefaultCrawl)
	prefix := cmp.Or(opts.Prefix, CrawlPrefix(opts.Crawl))
	if strings.ContainsAny(prefix, "{}") {
		return nil, fmt.Errorf("redisstore: the crawl prefix %q contains '{' or '}', which Redis Cluster reads as a hash tag; choose another name", prefix)
	}
	s := &Store{client: client, cache: client, opts: opts, prefix: prefix, log: quietlog.Or(opts.Logger),
		url: ClientURL(client), id: newProcessID()}
	if opts.CacheClient != nil {
		s.cache = opts.CacheClient
	}
	s.reach = &reach{url: s.url, wait: opts.Wait, log: s.log}
	s.beat = newHeartbeat(s)
	return s, nil
}

// newProcessID returns a random name for this process's leases, unique among the processes
// sharing the store.
func newProcessID() string {
	var id [8]byte
	_, _ = rand.Read(id[:])
	return hex.EncodeToString(id[:]) + ":"
}

// ClientURL returns the address of a client's server, or its cluster's nodes, as a redis:// URL
// without its password (the cluster form is go-redis's ParseClusterURL's), for logs and errors.
func ClientURL(c redis.UniversalClient) string {
	switch c := c.(type) {
	case *redis.Client:
		return Redacted(c.Options())
	case *redis.ClusterClient:
		o := c.Options()
		if len(o.Addrs) == 0 {
			return "redis://(a cluster without nodes)"
		}
		u := Redacted(&redis.Options{Addr: o.Addrs[0], Username: o.Username, Password: o.Password, TLSConfig: o.TLSConfig})
		u = strings.TrimSuffix(u, "/0")
		for i, a := range o.Addrs[1:] {
			u += string("?&"[min(i, 1)]) + "addr=" + a
		}
		return u
	}
	return fmt.Sprintf("(a %T)", c)
}

// Redacted returns the address of a client's server as a redis:// URL without its password, for
// logs and errors.
func Redacted(o *redis.Options) string {
	user := ""
	switch {
	case o.Username != "" && o.Password != "":
		user = o.Username + ":xxxxx@"
	case o.Password != "":
		user = ":xxxxx@"
	case o.Username != "":
		user = o.Username + "@"
	}
	scheme := "redis"
	if o.TLSConfig != nil {
		scheme = "rediss"
	}
	return fmt.Sprintf("%s://%s%s/%d", scheme, user, o.Addr, o.DB)
}

// Close stops renewing this process's leases and locks (they expire within
// Options.LeaseExpiry) and stops listening for freed places. It does not close the client.
func (s *Store) Close() error {
	s.beat.stop()
	if s.clock != nil {
		s.clock.wake.close()
	}
	return nil
}

// do runs op against Redis, retrying while Redis cannot be reached, for up to Options.Wait since
// the outage began; see reach. Nothing runs once the state was lost or Check refused the server.
func (s *Store) do(ctx context.Context, what string, op func(ctx context.Context) error) error {
	if err := s.lostErr(); err != nil {
		return err
	}
	if err := s.ensureChecked(ctx); err != nil {
		return err
	}
	return s.reach.do(ctx, what, op)
}

// lostErr returns the loss this process noticed, or nil.
func (s *Store) lostErr() error {
	if le := s.lost.Load(); le != nil {
		return le
	}
	return nil
}

// noteLost records that the crawl's state vanished, and says so once.
func (s *Store) noteLost(le *LostError) error {
	if s.lost.CompareAndSwap(nil, le) {
		s.log.Error(le.Error(), "redis", s.url)
	}
	return s.lost.Load()
}
