package cache

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"time"
)

// Store keeps stored responses for a [Transport]: metadata plus a body that streams in and out, so
// a large body costs a buffer of memory, not its size. Keys are opaque strings chosen by the
// transport. Implementations must be safe for concurrent use.
//
// The project ships [MemoryStore] (bounded, nothing on disk), [DiskStore] (a directory several
// processes may share) and [FromHTTPCache] (any gregjones/httpcache backend).
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
	// ErrCorrupt: the stored record is truncated or damaged; it has been removed and counts as a miss.
	ErrCorrupt = errors.New("cache: stored entry is corrupt")
	// ErrTooLarge: the body exceeds what the store keeps; the response passes through uncached.
	ErrTooLarge = errors.New("cache: body too large for the store")
)

// A record is how the disk store and the httpcache adapter lay an entry out as bytes:
//
//	body | metadata (JSON) | trailer
//
// The trailer comes last because the body streams in before its length is known. It holds a magic
// number, the lengths and CRC-32s of both parts, so a truncated or damaged record is detected
// before a byte of it is served.
const (
	recordMagic   = "ETQC"
	recordVersion = 1
	trailerLen    = 4 + 4 + 8 + 8 + 4 + 4 // magic, version, body len, meta len, body crc, meta crc
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func encodeTrailer(bodyLen int64, bodyCRC uint32, meta []byte) []byte {
	t := make([]byte, trailerLen)
	copy(t, recordMagic)
	binary.BigEndian.PutUint32(t[4:], recordVersion)
	binary.BigEndian.PutUint64(t[8:], uint64(bodyLen))
	binary.BigEndian.PutUint64(t[16:], uint64(len(meta)))
	binary.BigEndian.PutUint32(t[24:], bodyCRC)
	binary.BigEndian.PutUint32(t[28:], crc32.Checksum(meta, crcTable))
	return t
}

// maxMetaLen bounds the metadata a record may claim, so a damaged length cannot make a reader
// allocate gigabytes.
const maxMetaLen = 4 << 20

// readRecord validates the record of size bytes in r for key and returns its entry, the offset-0
// body length, and the body CRC. It checks everything but the body's CRC, which needs a pass over
// the body (see verifyBody).
func readRecord(r io.ReaderAt, size int64, key string) (*Entry, int64, uint32, error) {
	if size < trailerLen {
		return nil, 0, 0, fmt.Errorf("%w: %d bytes is shorter than a trailer", ErrCorrupt, size)
	}
	t := make([]byte, trailerLen)
	if _, err := r.ReadAt(t, size-trailerLen); err != nil {
		return nil, 0, 0, fmt.Errorf("%w: reading trailer: %v", ErrCorrupt, err)
	}
	if string(t[:4]) != recordMagic || binary.BigEndian.Uint32(t[4:]) != recordVersion {
		return nil, 0, 0, fmt.Errorf("%w: bad magic or version", ErrCorrupt)
	}
	bodyLen := int64(binary.BigEndian.Uint64(t[8:]))
	metaLen := int64(binary.BigEndian.Uint64(t[16:]))
	if bodyLen < 0 || metaLen <= 0 || metaLen > maxMetaLen || bodyLen+metaLen+trailerLen != size {
		return nil, 0, 0, fmt.Errorf("%w: lengths do not add up to %d bytes", ErrCorrupt, size)
	}
	meta := make([]byte, metaLen)
	if _, err := r.ReadAt(meta, bodyLen); err != nil {
		return nil, 0, 0, fmt.Errorf("%w: reading metadata: %v", ErrCorrupt, err)
	}
	if crc32.Checksum(meta, crcTable) != binary.BigEndian.Uint32(t[28:]) {
		return nil, 0, 0, fmt.Errorf("%w: metadata checksum mismatch", ErrCorrupt)
	}
	var e Entry
	if err := json.Unmarshal(meta, &e); err != nil {
		return nil, 0, 0, fmt.Errorf("%w: metadata: %v", ErrCorrupt, err)
	}
	if e.Key != key {
		return nil, 0, 0, fmt.Errorf("%w: record belongs to another key", ErrCorrupt)
	}
	if e.Header == nil {
		e.Header = http.Header{}
	}
	e.Size = bodyLen
	return &e, bodyLen, binary.BigEndian.Uint32(t[24:]), nil
}

// verifyBody reads the body once and compares its CRC, so a damaged body is caught before the
// transport serves any of it. The cost is one extra sequential read of the body.
func verifyBody(r io.ReaderAt, bodyLen int64, want uint32) error {
	h := crc32.New(crcTable)
	if _, err := io.Copy(h, io.NewSectionReader(r, 0, bodyLen)); err != nil {
		return fmt.Errorf("%w: reading body: %v", ErrCorrupt, err)
	}
	if h.Sum32() != want {
		return fmt.Errorf("%w: body checksum mismatch", ErrCorrupt)
	}
	return nil
}

// decodeRecord decodes a whole in-memory record.
func decodeRecord(b []byte, key string) (*Entry, []byte, error) {
	r := bytes.NewReader(b)
	e, n, crc, err := readRecord(r, int64(len(b)), key)
	if err != nil {
		return nil, nil, err
	}
	if crc32c(b[:n]) != crc {
		return nil, nil, fmt.Errorf("%w: body checksum mismatch", ErrCorrupt)
	}
	return e, b[:n], nil
}

// encodeMeta serialises e for a record.
func encodeMeta(key string, e *Entry) ([]byte, error) {
	c := *e
	c.Key = key
	b, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("cache: encoding entry for %s: %w", key, err)
	}
	return b, nil
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, crcTable) }
