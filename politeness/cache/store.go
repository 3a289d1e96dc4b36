package cache

import (
	"errors"
	"io"
	"net/http"
	"time"
)

// Store keeps stored responses for a [Transport]: metadata plus a body that streams in and out, so
// a large body costs a buffer of memory, not its size. Keys are opaque strings chosen by the
// transport. Implementations must be safe for concurrent use.
//
// The project ships [MemoryStore] (bounded, nothing on disk) and [DiskStore] (a directory several
// processes may share); redisstore provides one that several machines share.
type Store interface {
	// Get returns the entry stored under key and a reader of its body, which the caller must
	// close. An absent key gives an error wrapping [ErrNotFound]; a damaged entry gives one
	// wrapping [ErrCorrupt] and is never returned. The transport treats every error as a miss.
	Get(key string) (*Entry, io.ReadCloser, error)
	// Put starts storing e under key. The caller writes the body into the returned writer and
	// then calls Commit, which makes the entry visible at once (readers see the old entry or the
	// new one, never part of one), or Abort, which discards it. A store that cannot hold a body
	// of e.Size bytes returns an error wrapping [ErrTooLarge] and drops what it held under key.
	Put(key string, e *Entry) (BodyWriter, error)
	// Delete removes key; deleting an absent key is not an error.
	Delete(key string) error
}

// BodyWriter receives a body being stored; see [Store.Put].
type BodyWriter interface {
	io.Writer
	// Commit finishes the entry and makes it visible. After Commit the writer is spent.
	Commit() error
	// Abort discards the entry. It is safe to call after Commit (it then does nothing).
	Abort()
}

// Updater is implemented by stores that can replace an entry's metadata without rewriting its
// body (the 304 merge of RFC 9111 §4.3.4). Stores without it get the body copied, streamed.
type Updater interface {
	UpdateEntry(key string, e *Entry) error
}

// UpdateEntry replaces the metadata stored under key in s with e and keeps the body: through
// [Updater] when s has it, else by streaming the stored body into a new entry. It fails with s's
// error, [ErrNotFound] among them, and leaves the stored entry as it was when the copy fails.
func UpdateEntry(s Store, key string, e *Entry) error {
	if u, ok := s.(Updater); ok {
		return u.UpdateEntry(key, e)
	}
	_, body, err := s.Get(key)
	if err != nil {
		return err
	}
	defer body.Close()
	w, err := s.Put(key, e)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, body); err != nil {
		w.Abort()
		return err
	}
	return w.Commit()
}

// Entry is a stored response's metadata.
type Entry struct {
	// Key is the key the entry was stored under, kept so a store can detect a misplaced record.
	Key string `json:"key"`
	// Status is the response's status code. Zero marks a Vary index: an entry without a body
	// whose Header holds the Vary field and whose Variant names the variant generation.
	Status int `json:"status"`
	// Header holds the response's stored header fields (hop-by-hop fields removed).
	Header http.Header `json:"header"`
	// VaryValues holds, for each field the response's Vary lists, the request's normalised value.
	VaryValues map[string]string `json:"vary,omitempty"`
	// Variant is the generation of a Vary index; variants of one index share it.
	Variant string `json:"variant,omitempty"`
	// RequestTime and ResponseTime bracket the exchange that produced (or last validated) the
	// entry; they drive the age calculation of RFC 9111 §4.2.3.
	RequestTime  time.Time `json:"request_time"`
	ResponseTime time.Time `json:"response_time"`
	// Size is the body length in bytes, set by the store when the body is committed. The entry
	// given to Put carries the length the response announced (-1 when unknown), so a store with
	// a size limit can refuse a body before buffering any of it.
	Size int64 `json:"size"`
}

func (e *Entry) clone() *Entry {
	c := *e
	c.Header = e.Header.Clone()
	if e.VaryValues != nil {
		c.VaryValues = make(map[string]string, len(e.VaryValues))
		for k, v := range e.VaryValues {
			c.VaryValues[k] = v
		}
	}
	return &c
}

// Errors a Store reports.
var (
	// ErrNotFound: nothing is stored under the key.
	ErrNotFound = errors.New("cache: entry not found")
	// ErrCorrupt: the stored record is truncated or damaged; the store no longer serves it and it
	// counts as a miss.
	ErrCorrupt = errors.New("cache: stored entry is corrupt")
	// ErrTooLarge: the body exceeds what the store keeps; the response passes through uncached.
	ErrTooLarge = errors.New("cache: body too large for the store")
)
