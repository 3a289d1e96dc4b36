package main

// This file decides how --redis shares a crawl between processes: the budget per host, robots.txt,
// the queue of URLs, each origin's discovery and the cache move to one Redis server, and a crawl
// that cannot reach it waits --redis-wait and then stops.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/etiquette/discovery/plan"
	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/robots"
	"github.com/politecrawl/etiquette/redisstore"
)

// redisFlags are crawl's flags for sharing the crawl through Redis, and the store they open.
type redisFlags struct {
	redis       string
	redisPrefix string
	redisWait   time.Duration
	redisLease  time.Duration

	shared *redisstore.Store // opened by share; nil without --redis
}

func (o *redisFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&o.redis, "redis", "", "`URL`: share the crawl with every process given the same server and prefix "+
		"(redis://[user:password@]host:port[/db]): one budget per host for all of them, one robots.txt fetch, one reading of each origin's sitemaps, llms.txt and feeds, one queue of URLs, one cache")
	fs.StringVar(&o.redisPrefix, "redis-prefix", "", "`P`: the crawl's key prefix in Redis; processes with the same one crawl together "+
		"(default "+redisstore.CrawlPrefix("TOKEN")+", TOKEN the crawl token)")
	fs.DurationVar(&o.redisWait, "redis-wait", redisstore.DefaultWait, "`D`: how long to wait for Redis when it cannot be reached, sending nothing, before the crawl stops (exit 1)")
	fs.DurationVar(&o.redisLease, "redis-lease", redisstore.DefaultLeaseExpiry, "`D`: how long the places and URLs of a process that died stay held before the others take them over (a live process renews them every third of D)")
}

// share opens the Redis store of --redis and puts the crawl's clock (built from cfg), robots.txt
// keeper and cache (in front of p's disk store, which keeps the bodies too large for Redis) on it.
func (o *redisFlags) share(p *politeness.Policy, cfg hostclock.Config) error {
	ropts, err := redis.ParseURL(o.redis)
	if err != nil {
		return usagef("--redis %s: %v; want redis://[user:password@]host:port[/db]", redactedFlag(o.redis), err)
	}
	if o.redisWait <= 0 || o.redisLease <= 0 {
		return usagef("--redis-wait %v, --redis-lease %v: want positive durations such as 30s", o.redisWait, o.redisLease)
	}
	// The store reports outages itself, once, without the password; go-redis would log every
	// failed dial.
	redis.SetLogger(quietRedis{})
	st, err := redisstore.New(redis.NewClient(ropts), redisstore.Options{Crawl: p.Identity.CrawlToken(),
		Prefix: o.redisPrefix, Clock: cfg, Wait: o.redisWait, LeaseExpiry: o.redisLease, Logger: p.Logger})
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

// withRedisHint says in flags what to do about a Redis server that did not come back in time.
func withRedisHint(err error) error {
	var ue *redisstore.UnavailableError
	if errors.As(err, &ue) {
		return fmt.Errorf("%w (for longer than --redis-wait %v)", err, ue.Wait)
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
