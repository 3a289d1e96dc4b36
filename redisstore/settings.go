// What the crawl requires of the Redis server, checked before the first operation: that it
// keeps what it is given (no eviction), and that a single address is not one node of a cluster.

package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// EvictionError is returned by [Store.Check] (and so by the first operation) when a Redis server
// may evict keys: every key of the crawl carries an expiry, so under a volatile-* policy as
// under an allkeys-* one, memory pressure would forget start schedules, leases, queued URLs and
// the de-duplication.
type EvictionError struct {
	Node      string // the server (a cluster's master) that may evict
	Policy    string // its maxmemory-policy
	MaxMemory int64  // its maxmemory, bytes
}

func (e *EvictionError) Error() string {
	return fmt.Sprintf("redisstore: Redis at %s may evict the crawl's keys (maxmemory %d bytes, maxmemory-policy %s): "+
		"its budget, leases, queue and de-duplication would vanish under memory pressure; set maxmemory-policy noeviction "+
		"(CONFIG SET maxmemory-policy noeviction, and in redis.conf), keep the cache in a Redis of its own "+
		"(Options.CacheClient), or accept the risk with Options.AllowEviction", e.Node, e.MaxMemory, e.Policy)
}

// ClusterError is returned when the client talks to one node of a Redis Cluster as if it were
// a whole server: the node answers MOVED for the keys other nodes hold.
type ClusterError struct {
	URL string // the node, without its password
	Err error  // what the node answered, when it answered a command
}

func (e *ClusterError) Error() string {
	msg := fmt.Sprintf("redisstore: Redis at %s is a node of a Redis Cluster: give the client every node "+
		"(redis.NewClusterClient, or the URL form redis://host1:port1?addr=host2:port2&addr=host3:port3)", e.URL)
	if e.Err != nil {
		msg += " (it answered: " + e.Err.Error() + ")"
	}
	return msg
}

func (e *ClusterError) Unwrap() error { return e.Err }

// AuthError is returned when the server refuses the client's user or password (WRONGPASS,
// NOAUTH, NOPERM): waiting would not change the answer.
type AuthError struct {
	URL string // the server, without its password
	Err error
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("redisstore: Redis at %s refused the client: %v; check the user and password the client was given", e.URL, e.Err)
}

func (e *AuthError) Unwrap() error { return e.Err }

// nodeSettings are what one server says about the settings the crawl depends on.
type nodeSettings struct {
	node          string
	cluster       bool   // cluster_enabled:1
	configRefused error  // CONFIG GET is disabled or not permitted
	policy        string // maxmemory-policy
	maxMemory     int64
	appendOnly    string // "yes" | "no"
	save          string // the RDB save points, "" for none
}

// evicts reports whether the server may evict keys: an eviction policy and a memory limit.
func (n nodeSettings) evicts() bool {
	return n.configRefused == nil && n.policy != "noeviction" && n.maxMemory > 0
}

// Check reads the settings the crawl depends on from the server, or every master of a cluster,
// and refuses a server that cannot serve the crawl: one that may evict keys (an
// [*EvictionError], unless Options.AllowEviction), or one node of a cluster given as a single
// server (a [*ClusterError]). A server whose CONFIG command is disabled or not permitted is used,
// with a warning that its eviction policy could not be read. A server that keeps nothing across
// a restart (no append-only file, no save points) is used, and logged at Info: a restart then
// ends the crawl ([ErrStateLost]). It waits for an unreachable server like every operation.
//
// The first operation of the store runs it if the caller did not; a refusal is final, and every
// later operation returns it.
func (s *Store) Check(ctx context.Context) error {
	s.checkMu.Lock()
	defer s.checkMu.Unlock()
	if s.refused != nil {
		return s.refused
	}
	if s.checked {
		return nil
	}
	err := s.reach.do(ctx, "checking the Redis settings", s.check)
	var ue *UnavailableError
	switch {
	case err == nil:
		s.checked = true
	case !errors.As(err, &ue) && ctx.Err() == nil:
		s.refused = err
	}
	return err
}

func (s *Store) ensureChecked(ctx context.Context) error { return s.Check(ctx) }

func (s *Store) check(ctx context.Context) error {
	var nodes []nodeSettings
	switch c := s.client.(type) {
	case *redis.ClusterClient:
		var mu sync.Mutex
		err := c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			ns, err := readSettings(ctx, n, n.Options().Addr)
			mu.Lock()
			nodes = append(nodes, ns)
			mu.Unlock()
			return err
		})
		if err != nil {
			return err
		}
	default:
		ns, err := readSettings(ctx, s.client, s.url)
		if err != nil {
			return err
		}
		if _, single := s.client.(*redis.Client); single && ns.cluster {
			return &ClusterError{URL: s.url}
		}
		nodes = append(nodes, ns)
	}
	for _, n := range nodes {
		switch {
		case n.configRefused != nil:
			s.log.Warn("redisstore: could not read the Redis eviction policy (CONFIG GET is disabled or not permitted); "+
				"make sure maxmemory-policy is noeviction, or the crawl's state may vanish under memory pressure",
				"redis", n.node, "err", n.configRefused)
		case n.evicts() && !s.opts.AllowEviction:
			return &EvictionError{Node: n.node, Policy: n.policy, MaxMemory: n.maxMemory}
		case n.evicts():
			s.log.Warn("redisstore: Redis may evict the crawl's keys (Options.AllowEviction): under memory pressure "+
				"requests may start closer together than the budget, and pages may be fetched again",
				"redis", n.node, "maxmemory", n.maxMemory, "maxmemory-policy", n.policy)
		}
		if n.configRefused == nil && n.appendOnly != "yes" && strings.TrimSpace(n.save) == "" {
			s.log.Info("redisstore: Redis keeps no data across a restart (appendonly no, no save points): a restart ends the crawl",
				"redis", n.node)
		}
	}
	return nil
}

// readSettings asks one server for its cluster mode, eviction and persistence settings.
func readSettings(ctx context.Context, c redis.Cmdable, node string) (nodeSettings, error) {
	ns := nodeSettings{node: node}
	info, err := c.Info(ctx, "cluster").Result()
	if err != nil {
		return ns, err
	}
	ns.cluster = strings.Contains(info, "cluster_enabled:1")
	get := func(name string) (string, error) {
		m, err := c.ConfigGet(ctx, name).Result()
		if err != nil {
			return "", err
		}
		return m[name], nil
	}
	var vals [4]string
	for i, name := range []string{"maxmemory-policy", "maxmemory", "appendonly", "save"} {
		v, err := get(name)
		var re redis.Error
		if errors.As(err, &re) && !transient(err) {
			// CONFIG renamed away (rename-command) or not in the user's ACL.
			ns.configRefused = err
			return ns, nil
		}
		if err != nil {
			return ns, err
		}
		vals[i] = v
	}
	ns.policy, ns.appendOnly, ns.save = vals[0], vals[2], vals[3]
	ns.maxMemory, _ = strconv.ParseInt(vals[1], 10, 64)
	return ns, nil
}
