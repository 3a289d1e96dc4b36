package cache

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gregjones/httpcache"
)

// defaultHTTPCacheBody is the largest body fromHTTPCache stores when given no limit.
const defaultHTTPCacheBody = 8 << 20

// fromHTTPCache adapts a gregjones/httpcache Cache (its memory, disk, LevelDB, memcache and Redis
// backends all implement it) to a [Store], so users keep the backend they have. Such a backend
// holds each entry as one []byte, so the adapter buffers a body while it is stored: bodies larger
// than maxBody (0 = defaultHTTPCacheBody) pass through uncached. Each value is a record with
// lengths and checksums, so a damaged value is a miss, never served.
//
// Not exported: nothing in etiquette or its documentation offers it to users yet; the tests keep
// it working (export_test.go) so that exporting it again is one rename.
func fromHTTPCache(c httpcache.Cache, maxBody int64) Store {
	if maxBody <= 0 {
		maxBody = defaultHTTPCacheBody
	}
	return &httpcacheStore{c: c, max: maxBody}
}

type httpcacheStore struct {
	c   httpcache.Cache
	max int64
}

func (s *httpcacheStore) Get(key string) (*Entry, io.ReadCloser, error) {
	b, ok := s.c.Get(key)
	if !ok {
		return nil, nil, fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	e, body, err := decodeRecord(b, key)
	if err != nil {
		s.c.Delete(key)
		return nil, nil, err
	}
	return e, io.NopCloser(bytes.NewReader(body)), nil
}

func (s *httpcacheStore) Put(key string, e *Entry) (BodyWriter, error) {
	if e.Size > s.max {
		s.c.Delete(key)
		return nil, fmt.Errorf("%w: %d bytes, the adapter keeps at most %d per body", ErrTooLarge, e.Size, s.max)
	}
	return &httpcacheWriter{s: s, key: key, e: e.clone()}, nil
}

func (s *httpcacheStore) Delete(key string) error {
	s.c.Delete(key)
	return nil
}

type httpcacheWriter struct {
	s        *httpcacheStore
	key      string
	e        *Entry
	buf      bytes.Buffer
	tooLarge bool
	done     bool
}

func (w *httpcacheWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, errors.New("cache: write after commit or abort")
	}
	if w.tooLarge || int64(w.buf.Len()+len(p)) > w.s.max {
		w.tooLarge = true
		w.buf = bytes.Buffer{}
		return 0, ErrTooLarge
	}
	return w.buf.Write(p)
}

func (w *httpcacheWriter) Commit() error {
	if w.done {
		return nil
	}
	w.done = true
	if w.tooLarge {
		w.s.c.Delete(w.key) // superseded by a response too large to keep
		return ErrTooLarge
	}
	rec, err := encodeRecord(w.key, w.e, w.buf.Bytes(), time.Now().UnixNano())
	if err != nil {
		return err
	}
	w.s.c.Set(w.key, rec)
	return nil
}

func (w *httpcacheWriter) Abort() {
	w.done = true
	w.buf = bytes.Buffer{}
}
