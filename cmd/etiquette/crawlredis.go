package main

// This file decides how --redis shares a crawl between processes: the budget per host, robots.txt,
// the queue of URLs, each origin's discovery and the cache move to one Redis server or a Redis
// Cluster, and a crawl that cannot reach it waits --redis-wait and then stops.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/etiquette/crawler"
	"github.com/politecrawl/etiquette/discovery/plan"
	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/robots"
	"github.com/politecrawl/etiquette/redisstore"
)

// redisURLForms is what --redis and --redis-cache accept, for messages.
const redisURLForms = "redis://[user:password@]host:port[/db] for one server, " +
	"redis://[user:password@]host1:port1?addr=host2:port2&addr=host3:port3 for a Redis Cluster"

// redisFlags are crawl's flags for sharing the crawl through Redis, and the store they open.
type redisFlags struct {
	redis         string
	redisCache    string
	redisPrefix   string
	redisWait     time.Duration
	redisLease    time.Duration
	allowEviction bool

	shared *redisstore.Store // opened by share; nil without --redis
}

func (o *redisFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&o.redis, "redis", "", "`URL`: share the crawl with every process given the same server and prefix "+
		"("+redisURLForms+"): one budget per host for all of them, one robots.txt fetch, one reading of each origin's sitemaps, llms.txt and feeds, one queue of URLs, one cache. "+
		"The server must not evict keys (maxmemory-policy noeviction)")
	fs.StringVar(&o.redisCache, "redis-cache", "", "`URL`: keep the shared cache in this Redis instead (same forms as --redis); it may evict (allkeys-lru)")
	fs.BoolVar(&o.allowEviction, "redis-allow-eviction", false, "use a --redis server whose maxmemory-policy may evict the crawl's keys; "+
		"under memory pressure requests may then start closer together than the budget and pages be fetched again")
	fs.StringVar(&o.redisPrefix, "redis-prefix", "", "`P`: the crawl's key prefix in Redis; processes with the same one crawl together "+
		"(default "+redisstore.CrawlPrefix("TOKEN")+", TOKEN the crawl token)")
	fs.DurationVar(&o.redisWait, "redis-wait", redisstore.DefaultWait, "`D`: how long to wait for Redis when it cannot be reached, sending nothing, before the crawl stops (exit 1)")
	fs.DurationVar(&o.redisLease, "redis-lease", redisstore.DefaultLeaseExpiry, "`D`: how long the places and URLs of a process that died stay held before the others take them over (a live process renews them every third of D)")
}

// share opens the Redis store of --redis and puts the crawl's clock (built from cfg), robots.txt
// keeper and cache (in front of p's disk store, which keeps the bodies too large for Redis) on it.
func (o *redisFlags) share(p *politeness.Policy, cfg hostclock.Config) error {
	client, err := redisClient("--redis", o.redis)
	if err != nil {
		return err
	}
	var cacheClient redis.UniversalClient
	if o.redisCache != "" {
		if cacheClient, err = redisClient("--redis-cache", o.redisCache); err != nil {
			return err
		}
	}
	if o.redisWait <= 0 || o.redisLease <= 0 {
		return usagef("--redis-wait %v, --redis-lease %v: want positive durations such as 30s", o.redisWait, o.redisLease)
	}
	// The store reports outages itself, once, without the password; go-redis would log every
	// failed dial.
	redis.SetLogger(quietRedis{})
	st, err := redisstore.New(client, redisstore.Options{Crawl: p.Identity.CrawlToken(),
		Prefix: o.redisPrefix, Clock: cfg, Wait: o.redisWait, LeaseExpiry: o.redisLease, Logger: p.Logger,
		CacheClient: cacheClient, AllowEviction: o.allowEviction})
	if err != nil {
		return usagef("--redis-prefix: %v", err)
	}
	p.Clock = st.Clock()
	p.Robots = robots.NewKeeper(robots.Options{Store: st.Robots()})
	if p.CacheStore != nil {
		p.CacheStore = st.Cache(p.CacheStore)
	}
	o.shared = st
	return nil
}

// redisClient opens the client of a --redis or --redis-cache URL: a cluster client when the URL
// lists more nodes with addr=, else a client of one server. Either gives up on a server that
// stops answering when the store's wait ends (ContextTimeoutEnabled), not after its own
// timeouts and retries.
func redisClient(flagName, raw string) (redis.UniversalClient, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, usagef("%s %s: %v; want %s", flagName, redactedFlag(raw), err, redisURLForms)
	}
	if strings.Contains(u.Host, ",") {
		return nil, usagef("%s %s: a comma-separated list of addresses is not a URL; for a Redis Cluster list the other nodes with addr=: %s",
			flagName, redactedFlag(raw), redisURLForms)
	}
	if u.Query().Has("addr") {
		copts, err := redis.ParseClusterURL(raw)
		if err != nil {
			return nil, usagef("%s %s: %v; want %s", flagName, redactedFlag(raw), err, redisURLForms)
		}
		copts.ContextTimeoutEnabled = true
		return redis.NewClusterClient(copts), nil
	}
	ropts, err := redis.ParseURL(raw)
	if err != nil {
		return nil, usagef("%s %s: %v; want %s", flagName, redactedFlag(raw), err, redisURLForms)
	}
	ropts.ContextTimeoutEnabled = true
	return redis.NewClient(ropts), nil
}

// storage is the frontier's storage: the shared queue with --redis, else nil (in memory).
func (o *redisFlags) storage() frontier.Storage {
	if o.shared == nil {
		return nil
	}
	return o.shared.Queue()
}

// discoveryClaims shares each origin's discovery with --redis: the process that claims it reads
// its documents, the others take what it queued; nil without --redis.
func (o *redisFlags) discoveryClaims() plan.Claims {
	if o.shared == nil {
		return nil
	}
	return o.shared.Discovery()
}

// closeShared stops renewing what this process holds in Redis.
func (o *redisFlags) closeShared() {
	if o.shared != nil {
		o.shared.Close()
	}
}

// nothingFetched says why a crawl fetched no page. With --redis a crawl whose start URLs were
// all accepted before — by another process of the crawl, or by an earlier run of it whose keys
// have not expired — has nothing left to fetch, and no line on stdout says so.
func (o *redisFlags) nothingFetched(sum crawler.Summary) error {
	var dups int64
	for _, s := range sum.Origins {
		dups += s.Duplicates
	}
	if o.shared == nil || sum.Failed > 0 || dups == 0 {
		return errors.New("no page could be fetched; the lines on stdout say why")
	}
	prefix := o.redisPrefix
	if prefix == "" {
		prefix = "the crawl token's default prefix"
	}
	return fmt.Errorf("nothing to fetch: the crawl in Redis (--redis-prefix %s) already accepted every start URL — "+
		"its other processes fetched them, or an earlier run of it did, whose keys last %v after its last activity; "+
		"to crawl again now, give another --redis-prefix", prefix, redisstore.DefaultCrawlIdle)
}

// withRedisHint says in flags what to do about a Redis server that did not come back in time, or
// cannot serve the crawl.
func withRedisHint(err error) error {
	var (
		ue *redisstore.UnavailableError
		ee *redisstore.EvictionError
		ce *redisstore.ClusterError
		ae *redisstore.AuthError
	)
	switch {
	case errors.As(err, &ue):
		return fmt.Errorf("%w (for longer than --redis-wait %v)", err, ue.Wait)
	case errors.As(err, &ee):
		return fmt.Errorf("--redis: the server at %s may evict the crawl's keys (maxmemory %d bytes, maxmemory-policy %s), "+
			"which would forget the budget, the leases, the queue and the de-duplication under memory pressure: "+
			"set maxmemory-policy noeviction (CONFIG SET maxmemory-policy noeviction, and in redis.conf), "+
			"give the cache a Redis of its own with --redis-cache URL, or accept the risk with --redis-allow-eviction",
			ee.Node, ee.MaxMemory, ee.Policy)
	case errors.As(err, &ce):
		return fmt.Errorf("--redis %s: this is a cluster: list its nodes with addr= (redis://host1:port1?addr=host2:port2&addr=host3:port3)",
			ce.URL)
	case errors.As(err, &ae):
		return fmt.Errorf("--redis %s: the server refused the user or password given in --redis: %v", ae.URL, ae.Err)
	}
	return err
}

// redactedFlag is a --redis value fit for a message: without its password.
func redactedFlag(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	return "(an unparsable URL)"
}

type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}
