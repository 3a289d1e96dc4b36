package cache

import (
	"bytes"
	"container/list"
	"fmt"
	"io"
	"sync"
)

// Default bounds of a [MemoryStore].
const (
	DefaultMemoryBytes = 64 << 20
)

// MemoryStore is a bounded in-memory [Store] with least-recently-used eviction: nothing touches
// the disk, which is what the user-triggered mode wants. Bodies are necessarily held in memory,
// so bodies above MaxEntryBytes pass through uncached.
//
// Create one with [NewMemoryStore]; the zero value is not usable.
type MemoryStore struct {
	maxBytes, maxEntry int64

	mu    sync.Mutex
	used  int64
	lru   *list.List // of *memItem, most recently used at the front
	items map[string]*list.Element
}

type memItem struct {
	key  string
	e    *Entry
	body []byte
}

// NewMemoryStore returns a store holding at most maxBytes of bodies and metadata (0 means
// [DefaultMemoryBytes]); a single body may use at most a quarter of that.
func NewMemoryStore(maxBytes int64) *MemoryStore {
	if maxBytes <= 0 {
		maxBytes = DefaultMemoryBytes
	}
	return &MemoryStore{maxBytes: maxBytes, maxEntry: maxBytes / 4, lru: list.New(), items: map[string]*list.Element{}}
}

// Get implements [Store].
func (m *MemoryStore) Get(key string) (*Entry, io.ReadCloser, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.items[key]
	if !ok {
		return nil, nil, fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	m.lru.MoveToFront(el)
	it := el.Value.(*memItem)
	// Stored bodies are never mutated, only replaced, so readers share the slice.
	return it.e.clone(), io.NopCloser(bytes.NewReader(it.body)), nil
}

// Put implements [Store].
func (m *MemoryStore) Put(key string, e *Entry) (BodyWriter, error) {
	if e.Size > m.maxEntry {
		m.Delete(key)
		return nil, fmt.Errorf("%w: %d bytes, the memory store keeps at most %d per body", ErrTooLarge, e.Size, m.maxEntry)
	}
	w := &memWriter{m: m, key: key, e: e.clone()}
	if e.Size > 0 {
		// The announced length: one allocation of the body's size instead of a doubling series.
		w.buf.Grow(int(e.Size))
	} else {
		w.scratch = scratchBuffers.Get().(*bytes.Buffer)
	}
	return w, nil
}

// Delete implements [Store].
func (m *MemoryStore) Delete(key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.remove(key)
	return nil
}

// UpdateEntry implements [Updater].
func (m *MemoryStore) UpdateEntry(key string, e *Entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.items[key]
	if !ok {
		return fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	it := el.Value.(*memItem)
	c := e.clone()
	c.Key, c.Size = key, int64(len(it.body))
	el.Value = &memItem{key: key, e: c, body: it.body}
	m.lru.MoveToFront(el)
	return nil
}

// remove requires m.mu held.
func (m *MemoryStore) remove(key string) {
	if el, ok := m.items[key]; ok {
		m.used -= itemSize(el.Value.(*memItem))
		m.lru.Remove(el)
		delete(m.items, key)
	}
}

func itemSize(it *memItem) int64 {
	n := int64(len(it.body)) + int64(len(it.key)) + 256
	for k, vs := range it.e.Header {
		n += int64(len(k))
		for _, v := range vs {
			n += int64(len(v))
		}
	}
	return n
}

type memWriter struct {
	m   *MemoryStore
	key string
	e   *Entry
	// The body so far: in buf, sized once, when the entry's size is known; else in scratch, a
	// buffer from scratchBuffers, copied to a body of its exact size on Commit — growing a body
	// by doubling would allocate and clear about three times its size, and keep up to twice it.
	buf      bytes.Buffer
	scratch  *bytes.Buffer
	tooLarge bool
	done     bool
}

// scratchBuffers holds the buffers bodies of unknown size are collected in.
var scratchBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxScratch is the largest buffer scratchBuffers keeps: a rare huge body does not stay in the
// pool.
const maxScratch = 1 << 20

func (w *memWriter) body() *bytes.Buffer {
	if w.scratch != nil {
		return w.scratch
	}
	return &w.buf
}

// release gives the scratch buffer back to the pool, if w has one.
func (w *memWriter) release() {
	if w.scratch != nil {
		if w.scratch.Cap() <= maxScratch {
			w.scratch.Reset()
			scratchBuffers.Put(w.scratch)
		}
		w.scratch = nil
	}
}

func (w *memWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, fmt.Errorf("cache: write after commit or abort")
	}
	if w.tooLarge {
		return 0, ErrTooLarge
	}
	b := w.body()
	if int64(b.Len()+len(p)) > w.m.maxEntry {
		w.tooLarge = true
		w.release()
		w.buf = bytes.Buffer{}
		return 0, ErrTooLarge
	}
	return b.Write(p)
}

func (w *memWriter) Commit() error {
	if w.done {
		return nil
	}
	w.done = true
	body := w.buf.Bytes()
	if w.scratch != nil {
		body = append([]byte(nil), w.scratch.Bytes()...)
		w.release()
	}
	m := w.m
	m.mu.Lock()
	defer m.mu.Unlock()
	m.remove(w.key)
	if w.tooLarge {
		// The old entry is superseded by a response we could not keep.
		return ErrTooLarge
	}
	w.e.Key, w.e.Size = w.key, int64(len(body))
	it := &memItem{key: w.key, e: w.e, body: body}
	m.items[w.key] = m.lru.PushFront(it)
	m.used += itemSize(it)
	for m.used > m.maxBytes && m.lru.Len() > 1 {
		m.remove(m.lru.Back().Value.(*memItem).key)
	}
	return nil
}

func (w *memWriter) Abort() {
	w.done = true
	w.release()
	w.buf = bytes.Buffer{}
}
