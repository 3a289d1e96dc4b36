// The shared HTTP cache: stored responses in Redis, so that any process's re-crawl of a page is
// conditional; bodies too large for Redis stay in the process's own store.

package redisstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/etiquette/politeness/cache"
)

// Defaults of the shared cache.
const (
	// DefaultMaxCacheBody is the largest body kept in Redis: 1 MiB, a little above the pages of
	// most sites, far below Redis's 512 MB value limit, and small enough that a hit costs a
	// millisecond on the network rather than a pause in every other client's commands.
	DefaultMaxCacheBody = 1 << 20
	// DefaultCacheTTL is how long a stored response stays in Redis after it was last stored or
	// revalidated; the cache's own freshness rules decide long before that whether it is used.
	DefaultCacheTTL = 7 * 24 * time.Hour
)

// cacheOpTimeout bounds one cache operation. The cache is not waited for through an outage: a
// response it cannot read is a miss, and the request then waits at the clock, which does wait.
const cacheOpTimeout = 3 * time.Second

// CacheStore is the [cache.Store] of a [Store]: responses with bodies up to Options.MaxCacheBody
// are kept in Redis for every process, each under one key (a hash of the metadata and the body,
// written in one command, so readers see the old entry or the new one, never half of one);
// larger bodies go to the fallback store (the process's disk store), and an entry lives in one of
// the two only. Get it with [Store.Cache] and pass it as politeness.Policy.CacheStore.
//
// Both parts carry a CRC-32C, and the metadata the key it was stored under: a damaged or misplaced
// entry is reported as cache.ErrCorrupt, removed and never served. Vary indexes and variants are
// entries like any other (the transport chooses their keys). Entries expire Options.CacheTTL after
// they were last stored or updated. To bound the cache by memory, keep it in a Redis of its own
// (Options.CacheClient) with a maxmemory and allkeys-lru: the crawl's own Redis must not evict.
// Every command touches one entry's key, so on a cluster each lands on one slot without a tag.
type CacheStore struct {
	s        *Store
	fallback cache.Store
}

var (
	_ cache.Store   = (*CacheStore)(nil)
	_ cache.Updater = (*CacheStore)(nil)
)

// Cache returns the shared cache store; bodies above Options.MaxCacheBody go to fallback (nil:
// they are not cached).
func (s *Store) Cache(fallback cache.Store) *CacheStore {
	return &CacheStore{s: s, fallback: fallback}
}

// recordMagic starts a stored metadata field; a value without it is not an entry of ours.
const recordMagic = "etqc1"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sealed prefixes b with the magic (metadata only) and its CRC-32C.
func sealed(magic string, b []byte) []byte {
	out := make([]byte, 0, len(magic)+4+len(b))
	out = append(out, magic...)
	out = binary.BigEndian.AppendUint32(out, crc32.Checksum(b, castagnoli))
	return append(out, b...)
}

// unsealed checks and strips what sealed added.
func unsealed(magic string, v []byte) ([]byte, error) {
	if len(v) < len(magic)+4 || string(v[:len(magic)]) != magic {
		return nil, errors.New("not a record of this store")
	}
	sum, b := binary.BigEndian.Uint32(v[len(magic):]), v[len(magic)+4:]
	if crc32.Checksum(b, castagnoli) != sum {
		return nil, errors.New("checksum mismatch")
	}
	return b, nil
}

func cacheCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), cacheOpTimeout)
}

// Get returns the entry stored under key, from Redis or else the fallback; see [cache.Store].
func (c *CacheStore) Get(key string) (*cache.Entry, io.ReadCloser, error) {
	ctx, cancel := cacheCtx()
	defer cancel()
	rk := cacheKey(key)
	vals, err := c.s.cache.HMGet(ctx, rk, "m", "b").Result()
	if err != nil || len(vals) != 2 {
		if c.fallback != nil {
			return c.fallback.Get(key)
		}
		return nil, nil, fmt.Errorf("redisstore: reading the cached entry of %s: %w", key, err)
	}
	meta, mok := vals[0].(string)
	body, bok := vals[1].(string)
	if !mok && !bok {
		if c.fallback != nil {
			return c.fallback.Get(key)
		}
		return nil, nil, fmt.Errorf("%w: %s", cache.ErrNotFound, key)
	}
	e, b, err := decodeCached(key, meta, mok, body, bok)
	if err != nil {
		c.s.cache.Del(ctx, rk)
		return nil, nil, fmt.Errorf("%w: %s in Redis: %v; removed", cache.ErrCorrupt, key, err)
	}
	return e, io.NopCloser(bytes.NewReader(b)), nil
}

func decodeCached(key, meta string, mok bool, body string, bok bool) (*cache.Entry, []byte, error) {
	if !mok || !bok {
		return nil, nil, errors.New("half an entry")
	}
	m, err := unsealed(recordMagic, []byte(meta))
	if err != nil {
		return nil, nil, fmt.Errorf("metadata: %v", err)
	}
	b, err := unsealed("", []byte(body))
	if err != nil {
		return nil, nil, fmt.Errorf("body: %v", err)
	}
	var e cache.Entry
	if err := json.Unmarshal(m, &e); err != nil {
		return nil, nil, fmt.Errorf("metadata: %v", err)
	}
	if e.Key != key {
		return nil, nil, errors.New("the record belongs to another key")
	}
	if e.Header == nil {
		e.Header = http.Header{}
	}
	e.Size = int64(len(b))
	return &e, b, nil
}

func encodeMeta(key string, e *cache.Entry) ([]byte, error) {
	c := *e
	c.Key = key
	b, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("redisstore: encoding the cached entry of %s: %w", key, err)
	}
	return sealed(recordMagic, b), nil
}

// Put starts storing e under key: in Redis when its body fits, else in the fallback; see
// [cache.Store]. A body of unknown length is buffered up to the limit and moves to the fallback
// when it grows beyond it.
func (c *CacheStore) Put(key string, e *cache.Entry) (cache.BodyWriter, error) {
	if e.Size > c.s.opts.MaxCacheBody {
		return c.toFallback(key, e)
	}
	return &cacheWriter{c: c, key: key, e: e}, nil
}

// toFallback removes key from Redis (so it cannot shadow the new entry) and opens the fallback's
// writer.
func (c *CacheStore) toFallback(key string, e *cache.Entry) (cache.BodyWriter, error) {
	ctx, cancel := cacheCtx()
	defer cancel()
	c.s.cache.Del(ctx, cacheKey(key))
	if c.fallback == nil {
		return nil, fmt.Errorf("%w: %d bytes; the shared cache keeps at most %d per body (Options.MaxCacheBody) and has no fallback store",
			cache.ErrTooLarge, e.Size, c.s.opts.MaxCacheBody)
	}
	return c.fallback.Put(key, e)
}

// Delete removes key from Redis and the fallback.
func (c *CacheStore) Delete(key string) error {
	ctx, cancel := cacheCtx()
	defer cancel()
	err := c.s.cache.Del(ctx, cacheKey(key)).Err()
	if c.fallback != nil {
		err = errors.Join(err, c.fallback.Delete(key))
	}
	return err
}

// updateScript replaces an entry's metadata, keeping its body, when the entry exists.
//
//	KEYS  entry
//	ARGV  metadata, ttl ms
//	→ 1 updated, 0 absent
var updateScript = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], 'b') == 0 then return 0 end
redis.call('HSET', KEYS[1], 'm', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)

// UpdateEntry replaces the metadata of key's entry without rewriting its body (the 304 merge of
// RFC 9111 §4.3.4), where the entry lives; see [cache.Updater].
func (c *CacheStore) UpdateEntry(key string, e *cache.Entry) error {
	meta, err := encodeMeta(key, e)
	if err != nil {
		return err
	}
	ctx, cancel := cacheCtx()
	defer cancel()
	n, err := updateScript.Run(ctx, c.s.cache, []string{cacheKey(key)}, meta, c.s.opts.CacheTTL.Milliseconds()).Int64()
	switch {
	case err != nil:
		return fmt.Errorf("redisstore: updating the cached entry of %s: %w", key, err)
	case n == 1:
		return nil
	case c.fallback == nil:
		return fmt.Errorf("%w: %s", cache.ErrNotFound, key)
	}
	return cache.UpdateEntry(c.fallback, key, e)
}

// cacheWriter buffers a body for Redis, and hands it to the fallback's writer once it outgrows
// the limit.
type cacheWriter struct {
	c        *CacheStore
	key      string
	e        *cache.Entry
	buf      bytes.Buffer
	fallback cache.BodyWriter // set once the body outgrew Redis
	tooLarge bool
	done     bool
}

func (w *cacheWriter) Write(p []byte) (int, error) {
	switch {
	case w.done:
		return 0, errors.New("redisstore: write after commit or abort")
	case w.fallback != nil:
		return w.fallback.Write(p)
	case w.tooLarge:
		return 0, cache.ErrTooLarge
	}
	if int64(w.buf.Len()+len(p)) <= w.c.s.opts.MaxCacheBody {
		return w.buf.Write(p)
	}
	fw, err := w.c.toFallback(w.key, w.e)
	if err != nil {
		w.tooLarge = true
		w.buf = bytes.Buffer{}
		return 0, err
	}
	w.fallback = fw
	if _, err := fw.Write(w.buf.Bytes()); err != nil {
		return 0, err
	}
	w.buf = bytes.Buffer{}
	return fw.Write(p)
}

// Commit stores the entry in one command (in the fallback when it moved there) and removes any
// copy under key in the other store.
func (w *cacheWriter) Commit() error {
	if w.done {
		return nil
	}
	w.done = true
	if w.fallback != nil {
		return w.fallback.Commit()
	}
	if w.tooLarge {
		return cache.ErrTooLarge
	}
	meta, err := encodeMeta(w.key, w.e)
	if err != nil {
		return err
	}
	ctx, cancel := cacheCtx()
	defer cancel()
	rk := cacheKey(w.key)
	_, err = w.c.s.cache.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, rk, "m", meta, "b", sealed("", w.buf.Bytes()))
		p.PExpire(ctx, rk, w.c.s.opts.CacheTTL)
		return nil
	})
	w.buf = bytes.Buffer{}
	if err != nil {
		return fmt.Errorf("redisstore: storing the cached entry of %s: %w", w.key, err)
	}
	if w.c.fallback != nil {
		_ = w.c.fallback.Delete(w.key)
	}
	return nil
}

func (w *cacheWriter) Abort() {
	if w.fallback != nil {
		w.fallback.Abort()
	}
	w.done = true
	w.buf = bytes.Buffer{}
}
