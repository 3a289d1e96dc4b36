// The crawl's URL queue shared through Redis: per-origin queues, one de-duplication for every
// process, and URLs handed out under a lease, so that a process that dies loses nothing.

package redisstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/etiquette/frontier"
)

// ErrCrawlLost is found (errors.Is) in what every Queue method returns once the crawl's data has
// vanished from Redis while this process was using it — Redis restarted without persistence, or
// someone flushed it. The URLs queued before are gone; carrying on would end the crawl early and
// silently, or fetch pages again. The error is a [*LostError].
var ErrCrawlLost = errors.New("redisstore: the crawl's queue vanished from Redis (a restart without persistence, or a flush); " +
	"the URLs queued before are lost: start the crawl again, and give Redis persistence (appendonly yes) to survive a restart")

// Queue is the [frontier.Storage] of a [Store]: every process of the crawl takes URLs from the same
// per-origin queues, and a URL accepted by one is a duplicate for all (SADD of a 128-bit hash
// of the URL into the origin's seen set, in the same script as the queue limit and the append).
// Get it with [Store.Queue] and pass it as frontier.Options.Storage.
//
// A URL handed out is held under a lease (Options.LeaseExpiry) that this process renews until it
// is acknowledged. When a process dies its URLs' leases expire, and the next process to take from
// that origin puts them back at the head of the queue — past the de-duplication, which already
// holds them — and logs each as handed out again: it may be fetched twice (the dead process may
// have fetched it), never lost. [Queue.Taken] lets the frontier wait for them rather than end
// the crawl while another process still holds URLs.
//
// Two URLs collide in the seen set with probability about n²/2¹²⁹ for n URLs, which is never in
// practice. The crawl's keys outlive its last activity by Options.CrawlIdle.
type Queue struct {
	s *Store

	initOnce sync.Once
	inited   atomic.Bool // Init marked the crawl as present
	reused   atomic.Int64

	mu     sync.Mutex
	held   map[string][]string // "key\nURL" → the members of the taken set this process holds
	listed map[string]bool     // origins this process added to the crawl's origins set
	gens   map[string]string   // the generation of each origin's queue this process relies on
	nextID atomic.Uint64
}

var _ frontier.SharedStorage = (*Queue)(nil)

// Queue returns the store's frontier storage; every call returns the same one.
func (s *Store) Queue() *Queue {
	s.queueOnce.Do(func() {
		s.queue = &Queue{s: s, held: map[string][]string{}, listed: map[string]bool{}, gens: map[string]string{}}
	})
	return s.queue
}

// Init marks the crawl as present in Redis, or finds it there and resumes it, and starts renewing
// this process's leases.
func (q *Queue) Init() error {
	var err error
	q.initOnce.Do(func() {
		err = q.do("starting the crawl's queue", func(ctx context.Context) error {
			return q.s.client.SetArgs(ctx, q.s.prefix+"started", "1", redis.SetArgs{Mode: "NX", TTL: q.s.opts.CrawlIdle}).Err()
		})
		if errors.Is(err, redis.Nil) { // NX: another process started the crawl
			err = nil
		}
		if err == nil {
			q.inited.Store(true)
			q.s.beat.add(q.beat)
		}
	})
	return err
}

// do runs op unless the crawl's state was lost.
func (q *Queue) do(what string, op func(ctx context.Context) error) error {
	return q.s.do(context.Background(), what, op)
}

// generation returns the generation of key's queue this process relies on, "" for none yet.
func (q *Queue) generation(key string) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.gens[key]
}

// answered notes the generation of key's queue a script answered with, or the loss it reported.
func (q *Queue) answered(key string, code int64, gen string) error {
	if code == 3 {
		return q.s.noteLost(&LostError{URL: q.s.url, Origin: key, What: "the queue"})
	}
	q.mu.Lock()
	q.gens[key] = gen
	q.mu.Unlock()
	return nil
}

// AddRequest queues e under key; see [frontier.Storage].
func (q *Queue) AddRequest(key string, e frontier.Entry, limit int) (frontier.Admission, error) {
	if e.Depth < 0 {
		return 0, fmt.Errorf("redisstore: depth %d of %s is negative", e.Depth, e.URL)
	}
	if strings.Contains(e.Via, "\n") || strings.Contains(e.URL, "\n") {
		return 0, fmt.Errorf("redisstore: %q (via %q) contains a line break; a frontier entry cannot", e.URL, e.Via)
	}
	// The origin is listed before its entry is queued: a process told "duplicate" must find the
	// entry through Origins, wherever it is.
	if err := q.list(key); err != nil {
		return 0, err
	}
	k := q.s.crawlKeysOf(key)
	sum := sha256.Sum256([]byte(e.URL))
	var reply []any
	err := q.do("queueing "+e.URL, func(ctx context.Context) error {
		var err error
		reply, err = enqueueScript.Run(ctx, q.s.client, []string{k.queue, k.seen, k.generation}, sum[:16], encodeEntry(0, e), limit,
			q.s.opts.CrawlIdle.Milliseconds(), q.generation(key), newGeneration()).Slice()
		return err
	})
	if err != nil {
		return 0, err
	}
	code := toInt(reply, 0)
	if err := q.answered(key, code, toString(reply, 1)); err != nil {
		return 0, err
	}
	switch code {
	case 1:
		return frontier.Duplicate, nil
	case 2:
		return frontier.Dropped, nil
	}
	return frontier.Queued, nil
}

// list adds key to the crawl's origins, once per process.
func (q *Queue) list(key string) error {
	q.mu.Lock()
	listed := q.listed[key]
	q.mu.Unlock()
	if listed {
		return nil
	}
	// A first contact with an origin's queue takes the generation it finds there, whichever it
	// is: the crawl's own mark, checked first, tells a crawl that lost its data from a new one.
	var started int64
	if err := q.do("listing the origin "+key, func(ctx context.Context) error {
		var err error
		if started, err = q.s.client.Exists(ctx, q.s.prefix+"started").Result(); err != nil || (started == 0 && q.inited.Load()) {
			return err
		}
		p := q.s.client.TxPipeline()
		p.SAdd(ctx, q.s.prefix+"origins", key)
		p.PExpire(ctx, q.s.prefix+"origins", q.s.opts.CrawlIdle)
		_, err = p.Exec(ctx)
		return err
	}); err != nil {
		return err
	}
	if started == 0 && q.inited.Load() {
		return q.s.noteLost(&LostError{URL: q.s.url, What: "the crawl (" + q.s.prefix + "started)"})
	}
	q.mu.Lock()
	q.listed[key] = true
	q.mu.Unlock()
	return nil
}

// GetRequest takes the oldest entry of key's queue under a lease; see [frontier.Storage].
func (q *Queue) GetRequest(key string) (frontier.Entry, bool, error) {
	k := q.s.crawlKeysOf(key)
	id := q.s.id + "q" + strconv.FormatUint(q.nextID.Add(1), 10)
	var reply []any
	err := q.do("taking a URL of "+key, func(ctx context.Context) error {
		var err error
		reply, err = takeScript.Run(ctx, q.s.client, []string{k.queue, k.taken, k.generation}, id, q.s.opts.LeaseExpiry.Microseconds(),
			q.s.opts.CrawlIdle.Milliseconds(), q.generation(key), newGeneration()).Slice()
		return err
	})
	if err != nil {
		return frontier.Entry{}, false, err
	}
	if err := q.answered(key, toInt(reply, 0), toString(reply, 1)); err != nil || len(reply) < 4 {
		return frontier.Entry{}, false, err
	}
	entry, member := toString(reply, 2), toString(reply, 3)
	handedOut, e, err := decodeEntry(entry)
	if err != nil {
		// Not ours to fetch, and not to be handed out again: acknowledge it and say so.
		q.release(key, member)
		return frontier.Entry{}, false, fmt.Errorf("redisstore: the queue of %s held an entry it cannot read (%v); it was dropped", key, err)
	}
	q.mu.Lock()
	q.held[key+"\n"+e.URL] = append(q.held[key+"\n"+e.URL], member)
	q.mu.Unlock()
	if handedOut > 0 {
		q.reused.Add(1)
		q.s.log.Warn("redisstore: a URL handed to a process that stopped answering is handed out again; it may be fetched twice",
			"origin", key, "url", e.URL, "times", handedOut+1)
	}
	return e, true, nil
}

// Ack releases a taken entry for good; see [frontier.Storage].
func (q *Queue) Ack(key string, e frontier.Entry) error {
	q.mu.Lock()
	members := q.held[key+"\n"+e.URL]
	if len(members) == 0 {
		q.mu.Unlock()
		return nil
	}
	member := members[0]
	if len(members) == 1 {
		delete(q.held, key+"\n"+e.URL)
	} else {
		q.held[key+"\n"+e.URL] = members[1:]
	}
	q.mu.Unlock()
	return q.release(key, member)
}

func (q *Queue) release(key, member string) error {
	return q.do("acknowledging a URL of "+key, func(ctx context.Context) error {
		return q.s.client.ZRem(ctx, q.s.crawlKeysOf(key).taken, member).Err()
	})
}

// size returns key's waiting entries (those of expired leases included) and the entries held
// under a live lease, by any process.
func (q *Queue) size(key string) (waiting, taken int, err error) {
	k := q.s.crawlKeysOf(key)
	var reply []int64
	err = q.do("counting the URLs of "+key, func(ctx context.Context) error {
		var err error
		reply, err = sizeScript.Run(ctx, q.s.client, []string{k.queue, k.taken}).Int64Slice()
		return err
	})
	if err != nil || len(reply) < 2 {
		return 0, 0, err
	}
	return int(reply[0]), int(reply[1]), nil
}

// QueueSize returns the number of entries waiting in key's queue, entries whose holder stopped
// renewing them included; see [frontier.Storage].
func (q *Queue) QueueSize(key string) (int, error) {
	n, _, err := q.size(key)
	return n, err
}

// Origins returns the crawl's origins that have URLs waiting or held, by any process; see
// [frontier.Storage].
func (q *Queue) Origins() ([]string, error) {
	var keys, out []string
	err := q.do("listing the crawl's origins", func(ctx context.Context) error {
		var err error
		keys, err = q.s.client.SMembers(ctx, q.s.prefix+"origins").Result()
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, key := range keys {
		waiting, taken, err := q.size(key)
		if err != nil {
			return nil, err
		}
		if waiting+taken > 0 {
			out = append(out, key)
		}
	}
	return out, nil
}

// Taken returns the number of URLs handed out and not acknowledged, by every process of the crawl
// (leases that expired not counted: those URLs wait again). The frontier does not end the crawl
// while any are, since their pages may bring links and a process that died leaves them to come
// back.
func (q *Queue) Taken() (int, error) {
	var keys []string
	err := q.do("listing the crawl's origins", func(ctx context.Context) error {
		var err error
		keys, err = q.s.client.SMembers(ctx, q.s.prefix+"origins").Result()
		return err
	})
	if err != nil {
		return 0, err
	}
	total := 0
	for _, key := range keys {
		_, taken, err := q.size(key)
		if err != nil {
			return 0, err
		}
		total += taken
	}
	return total, nil
}

// HandedOutAgain returns the number of URLs this process took after a process that held them
// stopped answering: each may have been fetched twice.
func (q *Queue) HandedOutAgain() int64 { return q.reused.Load() }

// beat renews the leases on the entries this process holds and checks that the crawl is still in
// Redis.
func (q *Queue) beat(ctx context.Context) {
	q.mu.Lock()
	byOrigin := map[string][]any{}
	for hk, members := range q.held {
		key, _, _ := strings.Cut(hk, "\n")
		for _, m := range members {
			byOrigin[key] = append(byOrigin[key], m)
		}
	}
	q.mu.Unlock()
	if q.s.lostErr() != nil {
		return
	}
	exists, err := q.s.client.Exists(ctx, q.s.prefix+"started").Result()
	if err == nil && exists == 0 {
		q.s.noteLost(&LostError{URL: q.s.url, What: "the crawl (" + q.s.prefix + "started)"})
		return
	}
	_, err = q.s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.PExpire(ctx, q.s.prefix+"started", q.s.opts.CrawlIdle)
		p.PExpire(ctx, q.s.prefix+"origins", q.s.opts.CrawlIdle)
		for key, members := range byOrigin {
			// Eval, not EvalSha: in a pipeline a script the server does not know yet cannot be
			// loaded on the way.
			renewTakenScript.Eval(ctx, p, []string{q.s.crawlKeysOf(key).taken},
				append([]any{q.s.opts.LeaseExpiry.Microseconds()}, members...)...)
		}
		return nil
	})
	if err != nil {
		q.s.log.Warn("redisstore: could not renew the URLs this process holds; they are handed out again unless renewed in time",
			"redis", q.s.url, "err", err, "expiry", q.s.opts.LeaseExpiry)
	}
}

// encodeEntry lays an entry out as "handed-out\ndepth\nvia\nlastmod\nURL": the URL last, so that
// nothing in it is taken for a separator; lastmod is the Unix second, empty for the zero time.
// handedOut counts the times it was handed out before.
func encodeEntry(handedOut int, e frontier.Entry) string {
	lastMod := ""
	if !e.LastMod.IsZero() {
		lastMod = strconv.FormatInt(e.LastMod.Unix(), 10)
	}
	return strconv.Itoa(handedOut) + "\n" + strconv.Itoa(e.Depth) + "\n" + e.Via + "\n" + lastMod + "\n" + e.URL
}

func decodeEntry(s string) (int, frontier.Entry, error) {
	parts := strings.SplitN(s, "\n", 5)
	if len(parts) != 5 {
		return 0, frontier.Entry{}, errors.New("not five fields")
	}
	n, err1 := strconv.Atoi(parts[0])
	depth, err2 := strconv.Atoi(parts[1])
	if err := errors.Join(err1, err2); err != nil {
		return 0, frontier.Entry{}, err
	}
	e := frontier.Entry{URL: parts[4], Depth: depth, Via: parts[2]}
	if parts[3] != "" {
		sec, err := strconv.ParseInt(parts[3], 10, 64)
		if err != nil {
			return 0, frontier.Entry{}, err
		}
		e.LastMod = time.Unix(sec, 0).UTC()
	}
	return n, e, nil
}
