// The discovery of an origin shared through Redis: one process claims it and reads the origin's
// sitemaps, llms.txt, feeds and APIs; the others follow its phase and take what it queues.

package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/etiquette/discovery/plan"
)

// discoveryPoll is how often a process that follows another's discovery of an origin looks at
// its phase. It waits once per origin and crawl, for as long as the holder reads the documents:
// one small read per origin and second (a crawl of 1,000 origins whose sitemaps take minutes
// costs Redis 1,000 reads a second per following process), and the origin's pages follow the
// holder's release within a second.
const discoveryPoll = time.Second

// claimTimeout bounds the one attempt to give a claim up (Abandon).
const claimTimeout = 5 * time.Second

// DiscoveryClaims is the [plan.Claims] of a [Store]: per crawl (its prefix) and origin, one key
// says which process discovers the origin and how far it has come —
//
//	PREFIX{host[:port]}:discovery:ORIGIN   "held TOKEN" | "released TOKEN" (expiring) | "done"
//
// taken with SET NX and an expiry of Options.LeaseExpiry that the holder's heartbeat renews, so
// that a process that died holding it loses it within the lease and another takes the discovery
// over. "done" is written once, when the holder finishes, to expire Options.CrawlIdle later; a
// process that starts after that reads the origin's documents again. Get it with
// [Store.Discovery] and pass it as crawler.Config.DiscoveryClaims (or plan.Config.Claims), with
// the frontier over [Store.Queue].
type DiscoveryClaims struct {
	s *Store

	held   heldKeys // the claims this process holds, for the heartbeat
	beat   sync.Once
	nextID atomic.Uint64
}

var _ plan.Claims = (*DiscoveryClaims)(nil)

// Discovery returns the store's discovery claims; every call returns the same one.
func (s *Store) Discovery() *DiscoveryClaims {
	s.discoveryOnce.Do(func() {
		s.discovery = &DiscoveryClaims{s: s}
	})
	return s.discovery
}

// Scripts of the discovery claim.
var (
	// claimScript takes a free claim, or returns its value.
	//
	//	KEYS  claim
	//	ARGV  "held TOKEN", lease ms
	//	→ "" taken, else the value found
	claimScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then return cur end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ''
`)
	// moveClaimScript changes a claim this process holds (either phase): to "released TOKEN" with
	// the lease, to "done" with the crawl's idle time, or away (an empty value).
	//
	//	KEYS  claim
	//	ARGV  TOKEN, new value ("" deletes), ttl ms
	//	→ 1 moved, 0 the claim is not this process's any more
	moveClaimScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur ~= 'held ' .. ARGV[1] and cur ~= 'released ' .. ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) return 1 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`)
	// renewClaimScript extends a claim this process holds in either phase.
	//
	//	KEYS  claim
	//	ARGV  TOKEN, lease ms
	renewClaimScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur == 'held ' .. ARGV[1] or cur == 'released ' .. ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`)
)

// errClaimLost is returned by a claim's Release and Finish when its key no longer names this
// process: it expired (the heartbeat could not renew it) and another process may have taken the
// discovery over.
var errClaimLost = errors.New("redisstore: the discovery claim expired before it was renewed; another process may discover the origin too")

// Claim takes origin's discovery for this process when it is free, or waits until its phase
// in the process that holds it is later than seen (or it becomes free and this process takes
// it); see [plan.Claims]. While Redis cannot be reached it waits for it, within ctx and
// Options.Wait, then fails with an *UnavailableError.
func (d *DiscoveryClaims) Claim(ctx context.Context, origin string, seen plan.Phase) (plan.Claim, plan.Phase, error) {
	key, err := d.s.discoveryKey(origin)
	if err != nil {
		return nil, 0, err
	}
	token := d.s.id + "d" + strconv.FormatUint(d.nextID.Add(1), 10)
	for {
		var cur string
		err := d.s.do(ctx, "claiming the discovery of "+origin, func(ctx context.Context) error {
			var err error
			cur, err = claimScript.Run(ctx, d.s.client, []string{key}, "held "+token, d.s.opts.LeaseExpiry.Milliseconds()).Text()
			return err
		})
		if err != nil {
			return nil, 0, err
		}
		if cur == "" {
			d.held.hold(key, token)
			d.beat.Do(func() { d.s.beat.add(d.renew) })
			return &discoveryClaim{d: d, key: key, token: token}, plan.PhaseHeld, nil
		}
		if phase := claimPhase(cur); phase > seen {
			return nil, phase, nil
		}
		t := time.NewTimer(discoveryPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, 0, fmt.Errorf("redisstore: following another process's discovery of %s: %w", origin, ctx.Err())
		case <-t.C:
		}
	}
}

// claimPhase reads a claim's value.
func claimPhase(v string) plan.Phase {
	switch {
	case v == "done":
		return plan.PhaseDone
	case strings.HasPrefix(v, "released "):
		return plan.PhaseReleased
	}
	return plan.PhaseHeld
}

// renew extends the claims this process holds.
func (d *DiscoveryClaims) renew(ctx context.Context) {
	for key, token := range d.held.snapshot() {
		n, err := renewClaimScript.Run(ctx, d.s.client, []string{key}, token, d.s.opts.LeaseExpiry.Milliseconds()).Int()
		switch {
		case err != nil:
			d.s.log.Warn("redisstore: could not renew a discovery claim; another process may discover the origin too", "claim", key, "err", err)
		case n == 0:
			d.s.log.Warn("redisstore: a discovery claim expired before it was renewed; another process may discover the origin too", "claim", key)
			d.held.drop(key, token)
		}
	}
}

// discoveryClaim is this process's hold on one origin's discovery.
type discoveryClaim struct {
	d          *DiscoveryClaims
	key, token string
	ended      atomic.Bool
}

func (c *discoveryClaim) move(ctx context.Context, what, value string, ttl time.Duration) error {
	var n int
	err := c.d.s.do(ctx, what, func(ctx context.Context) error {
		var err error
		n, err = moveClaimScript.Run(ctx, c.d.s.client, []string{c.key}, c.token, value, ttl.Milliseconds()).Int()
		return err
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return errClaimLost
	}
	return nil
}

// forget stops renewing the claim.
func (c *discoveryClaim) forget() {
	c.ended.Store(true)
	c.d.held.drop(c.key, c.token)
}

// Release marks the claim released: the other processes let the origin's pages go. The heartbeat
// keeps renewing it.
func (c *discoveryClaim) Release(ctx context.Context) error {
	if c.ended.Load() {
		return nil
	}
	return c.move(ctx, "releasing the pages of a discovered origin", "released "+c.token, c.d.s.opts.LeaseExpiry)
}

// Finish marks the origin's discovery done for the crawl, for as long as its queue lives.
func (c *discoveryClaim) Finish(ctx context.Context) error {
	if c.ended.Swap(true) {
		return nil
	}
	defer c.forget()
	return c.move(ctx, "finishing the discovery of an origin", "done", c.d.s.opts.CrawlIdle)
}

// Abandon deletes the claim, if it is still this process's, so that another process takes the
// discovery over at once. It tries once, within claimTimeout; a claim it could not delete
// expires.
func (c *discoveryClaim) Abandon() {
	if c.ended.Swap(true) {
		return
	}
	defer c.forget()
	ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
	defer cancel()
	_ = moveClaimScript.Run(ctx, c.d.s.client, []string{c.key}, c.token, "", 0).Err()
}
