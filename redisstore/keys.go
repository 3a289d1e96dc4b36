// Where everything lives in Redis: the one home of the key layout.

package redisstore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"

	"github.com/politecrawl/etiquette/politeness/origin"
)

// Namespace is the fixed prefix of every key that belongs to an origin rather than to one crawl:
// its start budget, pauses, Crawl-delay floors, robots.txt and the shared cache. Every crawl on
// one Redis shares them, because the site pays for the crawler as a whole.
//
// Every key of one origin carries its budget key as a hash tag — "etiquette:{example.org}:clock"
// — so that the keys a script touches lie in one slot of a Redis Cluster.
//
//	etiquette:{host[:port]}:clock          hash: the schedule (tat, last, count, the ring r0…r63 of
//	                                       recent starts), the 429 penalty (factor, fails, okrun),
//	                                       the smoothed response time, the latest pause's end
//	etiquette:{host[:port]}:leases         sorted set: lease id → expiry (µs, server time)
//	etiquette:{host[:port]}:pause          "until-µs reason", expiring when the pause ends
//	etiquette:{host[:port]}:floors         hash: source → "interval-µs expiry-µs"
//	etiquette:{host[:port]}:robotsfirst    set while a robots.txt request waits for the origin
//	etiquette:{host[:port]}:freed          pub/sub channel: a place was freed
//	etiquette:{host[:port]}:generation     the generation of the origin's state (see generation.go)
//	etiquette:{host[:port]}:robots:ORIGIN  robots.txt of ORIGIN (scheme://host[:port]), JSON
//	etiquette:{host[:port]}:robotslock:ORIGIN  held by the process fetching it
//	etiquette:cache:SHA256(KEY)            hash: a cached response (m: metadata, b: body); every
//	                                       command on it touches this one key, so it needs no tag
//
// A crawl's own keys live under its prefix ([CrawlPrefix]):
//
//	PREFIX{host[:port]}:queue              list: the origin's waiting URLs
//	PREFIX{host[:port]}:taken              sorted set: URLs handed out → lease expiry (µs)
//	PREFIX{host[:port]}:seen               set: 128-bit hashes of every URL accepted
//	PREFIX{host[:port]}:gaveup             "at-µs reason": the origin was given up for this crawl
//	PREFIX{host[:port]}:generation         the generation of the origin's queue and seen set
//	PREFIX{host[:port]}:stats              hash: the crawl's counters of the origin, every process's
//	                                       (Clock.Stats: requests, waits, waited, too_many, …)
//	PREFIX{host[:port]}:discovery:ORIGIN   "held TOKEN" | "released TOKEN" | "done": which process
//	                                       discovers ORIGIN and how far it has come
//	PREFIX origins                         set: budget keys that had URLs queued
//	PREFIX started                         exists while the crawl's data does (see Queue)
const Namespace = "etiquette:"

// CrawlPrefix returns the default key prefix of the crawl named crawl: "etiquette:crawl:CRAWL:".
func CrawlPrefix(crawl string) string { return Namespace + "crawl:" + crawl + ":" }

// originKeys are the keys of one origin in the shared namespace.
type originKeys struct {
	budget                                                       string // the budget key: host[:port]
	clock, leases, pause, floors, robotsFirst, freed, generation string
}

func keysOf(budget string) originKeys {
	base := Namespace + "{" + budget + "}:"
	return originKeys{budget: budget, clock: base + "clock", leases: base + "leases", pause: base + "pause",
		floors: base + "floors", robotsFirst: base + "robotsfirst", freed: base + "freed", generation: base + "generation"}
}

// budgetOf returns the budget key of a channel name built by keysOf ("" when it is not one).
func budgetOf(channel string) string {
	rest, ok := strings.CutPrefix(channel, Namespace+"{")
	if !ok {
		return ""
	}
	budget, _, ok := strings.Cut(rest, "}:")
	if !ok {
		return ""
	}
	return budget
}

// crawlKeys are one origin's keys of one crawl.
type crawlKeys struct {
	queue, taken, seen, gaveUp, stats, generation string
}

func (s *Store) crawlKeysOf(budget string) crawlKeys {
	base := s.prefix + "{" + budget + "}:"
	return crawlKeys{queue: base + "queue", taken: base + "taken", seen: base + "seen", gaveUp: base + "gaveup",
		stats: base + "stats", generation: base + "generation"}
}

// robotsKeys returns the entry and lock keys of the robots.txt of robotsOrigin
// (scheme://host[:port]), tagged with its budget key.
func robotsKeys(robotsOrigin string) (entry, lock string, err error) {
	budget, err := budgetOfOrigin(robotsOrigin)
	if err != nil {
		return "", "", fmt.Errorf("redisstore: robots.txt origin %q: %w", robotsOrigin, err)
	}
	base := Namespace + "{" + budget + "}:"
	return base + "robots:" + robotsOrigin, base + "robotslock:" + robotsOrigin, nil
}

// discoveryKey returns the key of the claim on robotsOrigin's discovery in this crawl
// (scheme://host[:port]), tagged with its budget key.
func (s *Store) discoveryKey(robotsOrigin string) (string, error) {
	budget, err := budgetOfOrigin(robotsOrigin)
	if err != nil {
		return "", fmt.Errorf("redisstore: the discovery claim of origin %q: %w", robotsOrigin, err)
	}
	return s.prefix + "{" + budget + "}:discovery:" + robotsOrigin, nil
}

// budgetOfOrigin returns the budget key (host[:port]) of an origin written scheme://host[:port].
func budgetOfOrigin(robotsOrigin string) (string, error) {
	u, err := url.Parse(robotsOrigin)
	if err != nil {
		return "", err
	}
	return origin.BudgetKey(u)
}

// cacheKey returns the key of a cache entry: the transport's keys are URLs of any length, so
// they are hashed.
func cacheKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return Namespace + "cache:" + hex.EncodeToString(sum[:])
}
