package frontier

// This file decides how the in-process storage keeps URLs: compactly, so that a queue of a
// hundred thousand URLs costs little more than the URLs' own bytes.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"time"
)

// maxVias bounds the distinct Via words one Memory keeps; each is stored once and referred to by
// its index.
const maxVias = 255

// ErrTooManyVias is returned by AddRequest when an entry brings a Via word beyond the first
// 255 distinct ones: Via is meant to be a short word from a small set (start, link, sitemap).
var ErrTooManyVias = errors.New("frontier: more than 255 distinct Via values; use a short word from a small set")

// Memory is the in-process [Storage]: a queue per origin, in memory, dropped once it is empty
// and nothing of it is out (taken and not acknowledged).
// The zero value is not usable; call [NewMemory]. It is safe for concurrent use.
//
// Each queued URL costs its path and query, a few bytes of header and its de-duplication record:
// the part before the path ("https://example.org") is kept once per origin, and entries are
// packed one after another in chunks of at most 64 KiB that are freed as the queue is read.
// De-duplication keeps a 64-bit hash of each accepted URL (11 to 21 bytes a URL), not the URL
// itself, and keeps it for the whole crawl.
//
// The hash is seeded per Memory (hash/maphash), so collisions cannot be planned by a site. Two
// different URLs collide with probability about n²/2⁶⁵ over n accepted URLs: 3·10⁻⁸ for a million
// URLs, 3·10⁻⁴ for a hundred million. A collision makes one URL look already queued, so it would
// not be fetched; for a crawl of this kind that risk is far below the rate of pages lost to
// ordinary network errors, and it saves keeping every URL.
type Memory struct {
	seed maphash.Seed

	mu     sync.Mutex
	seen   hashSet
	queues map[string]*memQueue
	vias   []string
	viaIx  map[string]uint64
}

// memQueue is one origin's queue. An entry is encoded as uvarint(prefix index), uvarint(depth),
// uvarint(via index), uvarint(lastmod), uvarint(shared), uvarint(len(suffix)), suffix — where
// lastmod is 0 for none, else 1 + the zigzag-encoded Unix second, and prefix is the part of
// the URL before its path (splitURL), and the path and query are front-coded: the first shared
// bytes are those of the previous entry's, followed by suffix. Links of one page arrive together
// and share their directories, so this often halves what a path costs. Because the queue is
// first-in-first-out, the reader always has the previous entry at hand.
type memQueue struct {
	prefixes []string // usually one or two: http and https of the host
	bytes    byteQueue
	lastIn   string // path and query of the entry pushed last
	lastOut  string // path and query of the entry taken last
	n        int    // entries waiting
	taken    int    // entries taken and not acknowledged
}

// NewMemory returns an empty in-memory storage.
func NewMemory() *Memory {
	return &Memory{seed: maphash.MakeSeed(), queues: map[string]*memQueue{}, viaIx: map[string]uint64{}}
}

// Init does nothing: a Memory is ready when made.
func (m *Memory) Init() error { return nil }

// AddRequest queues e under key; see [Storage].
func (m *Memory) AddRequest(key string, e Entry, limit int) (Admission, error) {
	if e.Depth < 0 {
		return 0, fmt.Errorf("frontier: depth %d of %s is negative", e.Depth, e.URL)
	}
	h := maphash.String(m.seed, e.URL)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen.has(h) {
		return Duplicate, nil
	}
	q := m.queues[key]
	if q != nil && limit > 0 && q.n >= limit {
		return Dropped, nil
	}
	via, ok := m.viaIx[e.Via]
	if !ok {
		if len(m.vias) >= maxVias {
			return 0, fmt.Errorf("%w (%q)", ErrTooManyVias, e.Via)
		}
		via = uint64(len(m.vias))
		m.vias = append(m.vias, e.Via)
		m.viaIx[e.Via] = via
	}
	if q == nil {
		q = &memQueue{}
		m.queues[key] = q
	}
	prefix, rest := splitURL(e.URL)
	pi := -1
	for i, p := range q.prefixes {
		if p == prefix {
			pi = i
			break
		}
	}
	if pi < 0 {
		pi = len(q.prefixes)
		q.prefixes = append(q.prefixes, prefix)
	}
	shared := sharedPrefix(q.lastIn, rest)
	var head [6 * binary.MaxVarintLen64]byte
	n := binary.PutUvarint(head[:], uint64(pi))
	n += binary.PutUvarint(head[n:], uint64(e.Depth))
	n += binary.PutUvarint(head[n:], via)
	n += binary.PutUvarint(head[n:], encodeLastMod(e.LastMod))
	n += binary.PutUvarint(head[n:], uint64(shared))
	n += binary.PutUvarint(head[n:], uint64(len(rest)-shared))
	q.bytes.push(head[:n], rest[shared:])
	q.lastIn = rest
	q.n++
	m.seen.add(h)
	return Queued, nil
}

// GetRequest takes the oldest entry of key's queue; see [Storage].
func (m *Memory) GetRequest(key string) (Entry, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queues[key]
	if q == nil || q.n == 0 {
		return Entry{}, false, nil
	}
	b := q.bytes.front()
	var fields [6]uint64
	at := 0
	for i := range fields {
		v, n := binary.Uvarint(b[at:])
		fields[i], at = v, at+n
	}
	pi, depth, via, lastmod, shared, size := fields[0], fields[1], fields[2], fields[3], int(fields[4]), int(fields[5])
	rest := q.lastOut[:shared] + string(b[at:at+size])
	q.lastOut = rest
	e := Entry{URL: q.prefixes[pi] + rest, Depth: int(depth), Via: m.vias[via], LastMod: decodeLastMod(lastmod)}
	q.bytes.pop(at + size)
	q.n--
	q.taken++
	return e, true, nil
}

// Ack forgets a taken entry; an in-process queue has no lease to release.
func (m *Memory) Ack(key string, _ Entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if q := m.queues[key]; q != nil && q.taken > 0 {
		q.taken--
		if q.taken == 0 && q.n == 0 {
			// Nothing waits and nothing is out: a crawl passing through many origins keeps
			// only the record of their URLs seen, which is global.
			delete(m.queues, key)
		}
	}
	return nil
}

// QueueSize returns the number of entries waiting under key.
func (m *Memory) QueueSize(key string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if q := m.queues[key]; q != nil {
		return q.n, nil
	}
	return 0, nil
}

// Origins returns the keys with waiting entries.
func (m *Memory) Origins() ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var keys []string
	for k, q := range m.queues {
		if q.n > 0 {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// encodeLastMod packs t to the second: 0 for the zero time, else 1 + its Unix second zigzagged
// (a time before 1970 stays representable).
func encodeLastMod(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	s := t.Unix()
	return 1 + uint64(s<<1^s>>63)
}

// decodeLastMod is the inverse of encodeLastMod, in UTC.
func decodeLastMod(v uint64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	z := v - 1
	return time.Unix(int64(z>>1)^-int64(z&1), 0).UTC()
}

// sharedPrefix returns the length of the longest common prefix of a and b.
func sharedPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// Chunk sizes of a byteQueue: an origin with a handful of URLs costs a small chunk, a long queue
// costs chunks of maxChunk, each freed once read.
const (
	minChunk = 256
	maxChunk = 64 << 10
)

// byteQueue is a first-in-first-out queue of byte records kept in chunks. A record never spans
// two chunks, so front returns it as one slice. The zero value is an empty queue.
type byteQueue struct {
	chunks [][]byte // chunks[0] is read from at head; the last is appended to
	head   int
}

// push appends the record a+b.
func (q *byteQueue) push(a []byte, b string) {
	n := len(a) + len(b)
	last := len(q.chunks) - 1
	if last < 0 || cap(q.chunks[last])-len(q.chunks[last]) < n {
		size := minChunk
		if last >= 0 {
			size = min(2*cap(q.chunks[last]), maxChunk)
		}
		q.chunks = append(q.chunks, make([]byte, 0, max(size, n)))
		last++
	}
	c := append(q.chunks[last], a...)
	q.chunks[last] = append(c, b...)
}

// front returns the unread bytes of the first chunk: the oldest record starts there.
// It requires a non-empty queue.
func (q *byteQueue) front() []byte { return q.chunks[0][q.head:] }

// pop removes the oldest record, n bytes long, and frees its chunk once every record in it has
// been read; an emptied queue keeps no chunk.
func (q *byteQueue) pop(n int) {
	q.head += n
	if q.head < len(q.chunks[0]) {
		return
	}
	q.head = 0
	q.chunks[0] = nil
	q.chunks = q.chunks[1:]
	if len(q.chunks) == 0 {
		q.chunks = nil // a crawl may pass through many origins; an emptied one keeps nothing
	}
}
