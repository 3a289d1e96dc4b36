// Command distributed is one process of a crawl that several processes — on one machine or many —
// share through Redis: one server, or a Redis Cluster. Together they crawl as one crawler: one budget per host (3
// starts per second, 2 in flight, counted across all of them), one robots.txt fetch per host, one
// reading of each host's sitemaps and llms.txt, one queue of URLs in which each URL is fetched
// once, and one cache.
//
//	go run ./examples/distributed -redis redis://127.0.0.1:6379/0 https://example.org/ &
//	go run ./examples/distributed -redis redis://127.0.0.1:6379/0 https://example.org/
//
// For a cluster, list its nodes: -redis 'redis://10.0.0.1:6379?addr=10.0.0.2:6379&addr=10.0.0.3:6379'.
// The Redis must not evict keys (maxmemory-policy noeviction): the store refuses one that may.
//
// Start as many as you like, with the same -redis and -crawl; each prints the pages it fetched,
// and each exits when the crawl as a whole has nothing left. A process that dies hands the URLs
// it held to the others after its lease (30 s).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/url"
	"os"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/etiquette/crawler"
	"github.com/politecrawl/etiquette/discovery/plan"
	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/robots"
	"github.com/politecrawl/etiquette/redisstore"
)

// config is what one process is started with. Every process of a crawl gets the same.
type config struct {
	Redis string   // redis://host:port/db, or redis://host1:port1?addr=host2:port2&… for a cluster
	Crawl string   // the crawl's name: processes with the same one share its queue
	Start []string // start URLs; every process may give them, each is queued once
}

func main() {
	var cfg config
	flag.StringVar(&cfg.Redis, "redis", "redis://127.0.0.1:6379/0", "the Redis server (or, with addr=, cluster) the processes share")
	flag.StringVar(&cfg.Crawl, "crawl", "distributed-example", "the crawl's name")
	flag.Parse()
	if cfg.Start = flag.Args(); len(cfg.Start) == 0 {
		log.Fatal("usage: distributed [-redis URL] [-crawl NAME] URL…")
	}
	if err := run(context.Background(), cfg, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run crawls with the other processes of cfg.Crawl until the crawl as a whole is done, writing one
// "URL\tstatus" line to out per page this process fetched.
//
// One process may stop early (ctx ends, or it is killed): the URLs still queued stay in the shared
// queue for the others, and the ones it held go back to them when its leases expire.
func run(ctx context.Context, cfg config, out io.Writer) error {
	client, err := newClient(cfg.Redis)
	if err != nil {
		return err
	}
	defer client.Close()
	shared, err := redisstore.New(client, redisstore.Options{Crawl: cfg.Crawl})
	if err != nil {
		return err
	}
	defer shared.Close()
	// Refuses a Redis that may evict the crawl's keys, or one node of a cluster given alone.
	if err := shared.Check(ctx); err != nil {
		return err
	}

	// The door as usual, with its budget, robots.txt and cache in Redis. Bodies too large for
	// Redis (over 1 MiB) are cached in this process's memory.
	door, err := politeness.NewDoor(politeness.Policy{
		Identity: identity.Identity{Profile: identity.Generic, Token: "ExampleBot", Version: "1.0",
			InfoURL: "https://example.org/bot", Contact: "bot@example.org"},
		Clock:      shared.Clock(),
		Robots:     robots.NewKeeper(robots.Options{Store: shared.Robots()}),
		CacheStore: shared.Cache(cache.NewMemoryStore(0)),
	})
	if err != nil {
		return err
	}
	// The queue in Redis: a URL any process queued is handed to one of them, once.
	f, err := frontier.New(frontier.Options{Storage: shared.Queue(), Pacer: shared.Clock()})
	if err != nil {
		return err
	}
	// Discovery (robots.txt's sitemaps, llms.txt, feeds) is read once per host, by the process
	// that claims it in Redis; the others take the URLs it queues.
	_, err = crawler.Run(ctx, crawler.Config{
		Client:          door.Client(),
		Start:           cfg.Start,
		Frontier:        f,
		Workers:         4,
		Discovery:       &plan.Options{},
		DiscoveryClaims: shared.Discovery(),
		Report: func(r crawler.Result) {
			switch {
			case r.Err != nil:
				log.Printf("%s: %v", r.URL, r.Err)
			case r.Kind == kind.HTML: // pages; the discovery documents are reported too
				fmt.Fprintf(out, "%s\t%d\n", r.URL, r.Status)
			}
		},
	})
	return err
}

// newClient opens a cluster client when the URL lists more nodes (addr=), else a client of one
// server. ContextTimeoutEnabled lets the store give up a server that stops answering on time.
func newClient(raw string) (redis.UniversalClient, error) {
	if u, err := url.Parse(raw); err == nil && u.Query().Has("addr") {
		opts, err := redis.ParseClusterURL(raw)
		if err != nil {
			return nil, err
		}
		opts.ContextTimeoutEnabled = true
		return redis.NewClusterClient(opts), nil
	}
	opts, err := redis.ParseURL(raw)
	if err != nil {
		return nil, err
	}
	opts.ContextTimeoutEnabled = true
	return redis.NewClient(opts), nil
}
