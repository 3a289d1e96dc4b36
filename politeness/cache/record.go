package cache

// This file decides how an entry is laid out as bytes, for the disk store's segment files and the
// httpcache adapter's values, and when such bytes are a record that may be served.

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net/http"
)

// A record is one entry as bytes:
//
//	head (44 bytes) | key | metadata (JSON) | body
//
// The head holds a magic number, the version, a flag marking a deletion, the three lengths, the
// time the record was written (which orders records of one key written by different processes),
// and CRC-32Cs: one over the head and the key, so a reader of a segment file can index a record
// from its first bytes alone, one over the metadata and one over the body, so a truncated or
// damaged record is detected before a byte of it is served.
const (
	recordMagic   = "ETQR"
	recordVersion = 2
	headLen       = 44
)

// Offsets of the head's fields.
const (
	hVersion = 4  // uint16
	hFlags   = 6  // uint16
	hKeyLen  = 8  // uint32
	hMetaLen = 12 // uint32
	hBodyLen = 16 // uint64
	hWritten = 24 // int64, Unix nanoseconds
	hHeadCRC = 32 // over bytes [0, 32) and the key
	hMetaCRC = 36
	hBodyCRC = 40
)

// flagDeleted marks a record that deletes its key: it has no metadata and no body.
const flagDeleted = 1

// Limits a record's head may claim, so a damaged length cannot make a reader allocate gigabytes.
const (
	maxKeyLen  = 64 << 10
	maxMetaLen = 4 << 20
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func crc32c(b []byte) uint32 { return crc32.Checksum(b, crcTable) }

// recordHead is a record's head, decoded.
type recordHead struct {
	deleted bool
	keyLen  int
	metaLen int
	bodyLen int64
	written int64 // Unix nanoseconds
	metaCRC uint32
	bodyCRC uint32
}

// size is the length of the whole record.
func (h recordHead) size() int64 { return headLen + int64(h.keyLen+h.metaLen) + h.bodyLen }

// bodyOffset is where the body starts, from the record's first byte.
func (h recordHead) bodyOffset() int64 { return headLen + int64(h.keyLen+h.metaLen) }

// startRecord appends a record's head (to be filled in by finishRecord), key and metadata to b.
// The body is appended after them.
func startRecord(b []byte, key string, meta []byte) []byte {
	b = append(b, make([]byte, headLen)...)
	b = append(b, key...)
	return append(b, meta...)
}

// finishRecord fills in the head of the record rec starts with, whose key and metadata follow it.
func finishRecord(rec []byte, h recordHead) {
	copy(rec, recordMagic)
	binary.BigEndian.PutUint16(rec[hVersion:], recordVersion)
	var flags uint16
	if h.deleted {
		flags |= flagDeleted
	}
	binary.BigEndian.PutUint16(rec[hFlags:], flags)
	binary.BigEndian.PutUint32(rec[hKeyLen:], uint32(h.keyLen))
	binary.BigEndian.PutUint32(rec[hMetaLen:], uint32(h.metaLen))
	binary.BigEndian.PutUint64(rec[hBodyLen:], uint64(h.bodyLen))
	binary.BigEndian.PutUint64(rec[hWritten:], uint64(h.written))
	binary.BigEndian.PutUint32(rec[hMetaCRC:], h.metaCRC)
	binary.BigEndian.PutUint32(rec[hBodyCRC:], h.bodyCRC)
	binary.BigEndian.PutUint32(rec[hHeadCRC:], headCRC(rec[:hHeadCRC], rec[headLen:headLen+h.keyLen]))
}

func headCRC(fields, key []byte) uint32 {
	return crc32.Update(crc32c(fields), crcTable, key)
}

// encodeRecord returns the whole record of e with body, written at the Unix time written.
func encodeRecord(key string, e *Entry, body []byte, written int64) ([]byte, error) {
	meta, err := encodeMeta(key, e)
	if err != nil {
		return nil, err
	}
	rec := startRecord(make([]byte, 0, headLen+len(key)+len(meta)+len(body)), key, meta)
	rec = append(rec, body...)
	finishRecord(rec, recordHead{keyLen: len(key), metaLen: len(meta), bodyLen: int64(len(body)),
		written: written, metaCRC: crc32c(meta), bodyCRC: crc32c(body)})
	return rec, nil
}

// deletionRecord returns the record that deletes key, written at the Unix time written.
func deletionRecord(key string, written int64) []byte {
	rec := startRecord(make([]byte, 0, headLen+len(key)), key, nil)
	finishRecord(rec, recordHead{deleted: true, keyLen: len(key), written: written, metaCRC: crc32c(nil), bodyCRC: crc32c(nil)})
	return rec
}

// parseHead checks the head and key at the start of b (which must hold at least headLen bytes)
// and decodes the head. It returns the key when b holds all of it; a head whose key lies beyond
// b is decoded but not checked, and its key is returned empty (ok false).
func parseHead(b []byte) (h recordHead, key []byte, ok bool, err error) {
	if len(b) < headLen {
		return h, nil, false, fmt.Errorf("%w: %d bytes is shorter than a record's head", ErrCorrupt, len(b))
	}
	if string(b[:4]) != recordMagic || binary.BigEndian.Uint16(b[hVersion:]) != recordVersion {
		return h, nil, false, fmt.Errorf("%w: bad magic or version", ErrCorrupt)
	}
	flags := binary.BigEndian.Uint16(b[hFlags:])
	h = recordHead{
		deleted: flags&flagDeleted != 0,
		keyLen:  int(binary.BigEndian.Uint32(b[hKeyLen:])),
		metaLen: int(binary.BigEndian.Uint32(b[hMetaLen:])),
		bodyLen: int64(binary.BigEndian.Uint64(b[hBodyLen:])),
		written: int64(binary.BigEndian.Uint64(b[hWritten:])),
		metaCRC: binary.BigEndian.Uint32(b[hMetaCRC:]),
		bodyCRC: binary.BigEndian.Uint32(b[hBodyCRC:]),
	}
	if flags&^flagDeleted != 0 || h.keyLen <= 0 || h.keyLen > maxKeyLen || h.metaLen < 0 || h.metaLen > maxMetaLen ||
		h.bodyLen < 0 || h.bodyLen > 1<<50 || (h.deleted && (h.metaLen != 0 || h.bodyLen != 0)) || (!h.deleted && h.metaLen == 0) {
		return h, nil, false, fmt.Errorf("%w: impossible lengths or flags in a record's head", ErrCorrupt)
	}
	if len(b) < headLen+h.keyLen {
		return h, nil, false, nil
	}
	key = b[headLen : headLen+h.keyLen]
	if headCRC(b[:hHeadCRC], key) != binary.BigEndian.Uint32(b[hHeadCRC:]) {
		return h, nil, false, fmt.Errorf("%w: head checksum mismatch", ErrCorrupt)
	}
	return h, key, true, nil
}

// decodeMeta checks and decodes the metadata of the record with head h for key.
func decodeMeta(h recordHead, meta []byte, key string) (*Entry, error) {
	if crc32c(meta) != h.metaCRC {
		return nil, fmt.Errorf("%w: metadata checksum mismatch", ErrCorrupt)
	}
	var e Entry
	if err := json.Unmarshal(meta, &e); err != nil {
		return nil, fmt.Errorf("%w: metadata: %v", ErrCorrupt, err)
	}
	if e.Key != key {
		return nil, fmt.Errorf("%w: record belongs to another key", ErrCorrupt)
	}
	if e.Header == nil {
		e.Header = http.Header{}
	}
	e.Size = h.bodyLen
	return &e, nil
}

// decodeRecord checks the whole record b for key and returns its entry and body (a slice of b).
// A deletion record is reported as [ErrNotFound].
func decodeRecord(b []byte, key string) (*Entry, []byte, error) {
	h, k, ok, err := parseHead(b)
	if err != nil {
		return nil, nil, err
	}
	if !ok || h.size() != int64(len(b)) {
		return nil, nil, fmt.Errorf("%w: lengths do not add up to %d bytes", ErrCorrupt, len(b))
	}
	if string(k) != key {
		return nil, nil, fmt.Errorf("%w: record belongs to another key", ErrCorrupt)
	}
	if h.deleted {
		return nil, nil, fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	body := b[h.bodyOffset():]
	if crc32c(body) != h.bodyCRC {
		return nil, nil, fmt.Errorf("%w: body checksum mismatch", ErrCorrupt)
	}
	e, err := decodeMeta(h, b[headLen+h.keyLen:h.bodyOffset()], key)
	if err != nil {
		return nil, nil, err
	}
	return e, body, nil
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
