// robots.txt shared through Redis: one process fetches an origin's robots.txt while the others
// wait for its result, and every process obeys the same copy.

package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/etiquette/politeness/robots"
)

// Timing of the shared robots.txt store.
const (
	// robotsRetention is how long a robots.txt entry stays in Redis after it expired: the keeper
	// needs the last good copy when a refresh fails (RFC 9309 §2.4 lets it be used while
	// robots.txt is unreachable, even past 24 h), but a copy nobody refreshed for a week is not
	// worth keeping.
	robotsRetention = 7 * 24 * time.Hour
	// robotsLockPoll is how often a process waiting for another's robots.txt fetch looks again.
	// It waits once per origin and robots.txt lifetime, usually for a fraction of a second, so
	// polling costs less than a subscription would.
	robotsLockPoll = 100 * time.Millisecond
	// robotsReadTimeout bounds the read behind Load, which has no context and is on the path of
	// every decision once the local copy expired.
	robotsReadTimeout = 3 * time.Second
)

// RobotsStore is the [robots.Store] and [robots.Locker] of a [Store]: a robots.Keeper on it
// fetches an origin's robots.txt once for every process (the others wait on the lock, then read
// the holder's result), and the copy in force — its fetch time, outcome, validators and body, from
// which each process rebuilds the rules — is the same everywhere. The keeper's lifecycle (a copy
// kept 1–24 h, the last good copy in force when a refresh fails, everything disallowed while
// robots.txt is unreachable and no good copy is known) therefore holds across processes, counted
// on each process's clock against the fetching process's times. Get it with [Store.Robots]:
//
//	policy.Robots = robots.NewKeeper(robots.Options{Store: st.Robots()})
//
// Each process keeps a local copy of an entry until it expires, so a decision costs no round
// trip. The fetch lock expires Options.LeaseExpiry after its holder stopped renewing it.
type RobotsStore struct {
	s     *Store
	local *robots.MemoryStore

	held   heldKeys // the fetch locks this process holds, for the heartbeat
	beat   sync.Once
	nextID atomic.Uint64

	// testHookLockWait, set only by this package's tests before first use, is called whenever
	// Lock finds another process fetching.
	testHookLockWait func(origin string)
}

var (
	_ robots.Store  = (*RobotsStore)(nil)
	_ robots.Locker = (*RobotsStore)(nil)
)

// Robots returns the store's robots.txt store; every call returns the same one.
func (s *Store) Robots() *RobotsStore {
	s.robotsOnce.Do(func() {
		s.robots = &RobotsStore{s: s, local: robots.NewMemoryStore(0)}
	})
	return s.robots
}

// storedRobots is an entry as Redis keeps it: its exported fields, the error as text, and
// whether a File applies (an empty robots.txt is a File too).
type storedRobots struct {
	Origin       string         `json:"origin"`
	URL          string         `json:"url"`
	Outcome      robots.Outcome `json:"outcome"`
	Status       int            `json:"status,omitempty"`
	Err          string         `json:"err,omitempty"`
	Fetched      time.Time      `json:"fetched"`
	Expires      time.Time      `json:"expires"`
	HasFile      bool           `json:"has_file,omitempty"`
	Body         []byte         `json:"body,omitempty"`
	ETag         string         `json:"etag,omitempty"`
	LastModified string         `json:"last_modified,omitempty"`
	Stale        bool           `json:"stale,omitempty"`
	Good         time.Time      `json:"good"`
}

func encodeRobots(e *robots.Entry) ([]byte, error) {
	st := storedRobots{Origin: e.Origin, URL: e.URL, Outcome: e.Outcome, Status: e.Status, Fetched: e.Fetched,
		Expires: e.Expires, HasFile: e.File != nil, Body: e.Body, ETag: e.ETag, LastModified: e.LastModified,
		Stale: e.Stale, Good: e.Good}
	if e.Err != nil {
		st.Err = e.Err.Error()
	}
	return json.Marshal(st)
}

// decodeRobots rebuilds an entry of origin; the rules are parsed again from the body.
func decodeRobots(origin string, b []byte) (*robots.Entry, error) {
	var st storedRobots
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, err
	}
	if st.Origin != origin {
		return nil, fmt.Errorf("the entry belongs to %q", st.Origin)
	}
	if st.Outcome < robots.Parsed || st.Outcome > robots.Unreachable || len(st.Body) > robots.MaxBytes+1 {
		return nil, errors.New("not an entry the keeper could have saved")
	}
	e := &robots.Entry{Origin: st.Origin, URL: st.URL, Outcome: st.Outcome, Status: st.Status, Fetched: st.Fetched,
		Expires: st.Expires, Body: st.Body, ETag: st.ETag, LastModified: st.LastModified, Stale: st.Stale, Good: st.Good}
	if st.Err != "" {
		e.Err = errors.New(st.Err)
	}
	if st.HasFile {
		e.File = robots.Parse(st.Body)
	}
	return e, nil
}

// Load returns origin's entry: this process's copy until it expires, then the one in Redis. When
// Redis cannot be reached it returns the local copy, expired or not, or nil; see [robots.Store].
func (r *RobotsStore) Load(origin string) *robots.Entry {
	mine := r.local.Load(origin)
	if mine != nil && time.Now().Before(mine.Expires) {
		return mine
	}
	key, _, err := robotsKeys(origin)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), robotsReadTimeout)
	defer cancel()
	v, err := r.s.client.Get(ctx, key).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return nil
	case err != nil:
		r.s.log.Debug("redisstore: robots.txt could not be read from Redis; using this process's copy", "origin", origin, "err", err)
		return mine
	}
	e, err := decodeStoredRobots(origin, v)
	if err != nil {
		r.s.log.Warn("redisstore: a stored robots.txt entry cannot be read; it is fetched again", "origin", origin, "err", err)
		return nil
	}
	r.local.Save(e)
	return e
}

// The stored value is "fetched-µs\n" followed by the entry's JSON, so that the save script can
// compare ages without decoding JSON.
func decodeStoredRobots(origin string, v []byte) (*robots.Entry, error) {
	for i, c := range v {
		if c == '\n' {
			return decodeRobots(origin, v[i+1:])
		}
	}
	return nil, errors.New("no age prefix")
}

// saveRobotsScript stores an entry unless a newer one (fetched later) is stored already.
//
//	KEYS  entry
//	ARGV  fetched µs, value, ttl ms
//	→ 1 saved, 0 a newer one was there
var saveRobotsScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then
  local f = tonumber(string.match(cur, '^(%d+)\n'))
  if f and f > tonumber(ARGV[1]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`)

// Save makes e the entry of its origin for every process, unless a newer one was saved; see
// [robots.Store]. When Redis cannot be reached this process keeps e, and the others fetch
// robots.txt themselves.
func (r *RobotsStore) Save(e *robots.Entry) {
	r.local.Save(e)
	key, _, err := robotsKeys(e.Origin)
	if err != nil {
		return
	}
	b, err := encodeRobots(e)
	if err != nil {
		r.s.log.Warn("redisstore: a robots.txt entry could not be encoded; other processes fetch it themselves", "origin", e.Origin, "err", err)
		return
	}
	fetched := e.Fetched.UnixMicro()
	value := append([]byte(strconv.FormatInt(fetched, 10)+"\n"), b...)
	ttl := max(time.Until(e.Expires), 0) + robotsRetention
	ctx, cancel := context.WithTimeout(context.Background(), robotsReadTimeout)
	defer cancel()
	if err := saveRobotsScript.Run(ctx, r.s.client, []string{key}, fetched, value, ttl.Milliseconds()).Err(); err != nil {
		r.s.log.Warn("redisstore: robots.txt could not be shared through Redis; other processes fetch it themselves",
			"origin", e.Origin, "err", err)
	}
}

// unlockScript deletes a lock if the caller still holds it, and renewLockScript extends it.
//
//	KEYS  lock
//	ARGV  token (, ttl ms)
var (
	unlockScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)
	renewLockScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`)
)

// Lock waits until this process may fetch origin's robots.txt — no other process is fetching
// it — or ctx ends; see [robots.Locker]. The lock expires Options.LeaseExpiry after its holder
// stopped renewing it, so a process that died while fetching holds up the others no longer.
// While Redis cannot be reached it waits for it, within ctx and Options.Wait.
func (r *RobotsStore) Lock(ctx context.Context, origin string) (func(), error) {
	_, lockKey, err := robotsKeys(origin)
	if err != nil {
		return nil, err
	}
	token := r.s.id + "r" + strconv.FormatUint(r.nextID.Add(1), 10)
	for {
		var got bool
		err := r.s.do(ctx, "waiting for the robots.txt of "+origin, func(ctx context.Context) error {
			var err error
			got, err = r.s.client.SetNX(ctx, lockKey, token, r.s.opts.LeaseExpiry).Result()
			return err
		})
		if err != nil {
			return nil, err
		}
		if got {
			break
		}
		if r.testHookLockWait != nil {
			r.testHookLockWait(origin)
		}
		t := time.NewTimer(robotsLockPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("redisstore: waiting for another process's fetch of %s/robots.txt: %w", origin, ctx.Err())
		case <-t.C:
		}
	}
	r.held.hold(lockKey, token)
	r.beat.Do(func() { r.s.beat.add(r.renew) })
	var once sync.Once
	return func() {
		once.Do(func() {
			r.held.drop(lockKey, token)
			ctx, cancel := context.WithTimeout(context.Background(), robotsReadTimeout)
			defer cancel()
			_ = unlockScript.Run(ctx, r.s.client, []string{lockKey}, token).Err()
		})
	}, nil
}

// renew extends the locks this process holds.
func (r *RobotsStore) renew(ctx context.Context) {
	for key, token := range r.held.snapshot() {
		if err := renewLockScript.Run(ctx, r.s.client, []string{key}, token, r.s.opts.LeaseExpiry.Milliseconds()).Err(); err != nil {
			r.s.log.Warn("redisstore: could not renew a robots.txt lock; another process may fetch it too", "lock", key, "err", err)
		}
	}
}
