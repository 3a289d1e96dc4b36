package cache

// This file keeps a disk store's index in step with the directory: which record of a key is the
// newest, and which segments other processes added, grew or removed.

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// slot is where the newest known record of a key lies. It holds no pointer, so that the garbage
// collector need not scan an index of a hundred thousand records.
type slot struct {
	seg     uint32 // segment.id
	deleted bool
	off     int64
	size    int64
	written int64
}

// newer reports whether a is a later record of its key than b: written later, or at the same
// nanosecond in a segment whose name sorts later, or later in the same segment. Every process
// orders two records the same way (but for two deletions of one time, which are alike). The
// caller holds mu.
func (s *DiskStore) newer(a, b slot) bool {
	if a.written != b.written {
		return a.written > b.written
	}
	if a.deleted && b.deleted {
		// Two deletions of one time: a deletion carried forward by evict and the one it copies.
		// The copy is the one that stays, and either says the same.
		return true
	}
	if a.seg != b.seg {
		sa, sb := s.byID[a.seg], s.byID[b.seg]
		if sa == nil || sb == nil {
			return sb == nil
		}
		return sa.name > sb.name
	}
	return a.off > b.off
}

// keyHash is the index's key: the first half of the key's SHA-256 (the record holds the key
// itself, which Get compares).
type keyHash [16]byte

func hashKey(key string) keyHash {
	sum := sha256.Sum256([]byte(key))
	return keyHash(sum[:16])
}

// indexRecord records sl as key h's record unless the index knows a newer one.
func (s *DiskStore) indexRecord(h keyHash, sl slot) {
	s.mu.Lock()
	if cur, ok := s.index[h]; !ok || s.newer(sl, cur) {
		s.index[h] = sl
	}
	if seg := s.byID[sl.seg]; seg != nil && !sl.deleted {
		seg.minWritten = min(seg.minWritten, sl.written)
	}
	s.mu.Unlock()
}

// refresh brings the index up to date with the directory: it opens the segments other
// processes started, indexes the records appended to them since the last refresh, forgets the
// segments that were removed, and recounts the directory's size.
func (s *DiskStore) refresh() {
	if !s.scanMu.TryLock() {
		return // another goroutine is refreshing
	}
	defer s.scanMu.Unlock()
	s.refreshLocked()
}

// refreshLocked is refresh, for a caller holding scanMu.
func (s *DiskStore) refreshLocked() {
	if s.closed.Load() {
		return
	}
	s.nextScan.Store(s.now().Add(refreshEvery).UnixNano())
	s.sinceRefresh.Store(0)
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		s.log.Warn("cache: listing the cache directory failed; other processes' records stay unseen", "dir", s.dir, "err", err)
		return
	}
	for _, d := range entries {
		name := d.Name()
		s.mu.RLock()
		_, known := s.segs[name]
		s.mu.RUnlock()
		if known || !isSegmentName(name) {
			continue
		}
		if _, err := s.openSegment(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("cache: opening a segment failed; its records stay unseen", "segment", name, "err", err)
		}
	}
	s.writeMu.Lock()
	active := s.active
	s.writeMu.Unlock()
	var total int64
	var gone []*segment
	for _, seg := range s.segments() {
		if seg.placing.Load() {
			continue
		}
		fi, err := os.Stat(filepath.Join(s.dir, seg.name))
		if err != nil || !os.SameFile(fi, seg.fi) {
			gone = append(gone, seg)
			continue
		}
		total += fi.Size()
		// This process's own records were indexed as they were written; the segment it appends
		// to is read once it is sealed, for what another process may add after resuming it.
		if seg != active && fi.Size() > seg.scanned {
			s.scan(seg, fi.Size())
		}
	}
	s.forget(gone)
	s.used.Store(total)
}

// segments returns the open segments.
func (s *DiskStore) segments() []*segment {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*segment, 0, len(s.segs))
	for _, seg := range s.segs {
		out = append(out, seg)
	}
	return out
}

// scan indexes the whole records of another process's segment from where the last scan stopped
// up to size. It stops at a record that is incomplete (still being written) or damaged, and the
// next refresh tries again from there: a writer that died leaves its last record cut short, and a
// record damaged in the middle of a segment hides the ones after it (they are misses).
func (s *DiskStore) scan(seg *segment, size int64) {
	buf := make([]byte, headLen+512)
	off := seg.scanned
	for off+headLen <= size {
		h, key, err := headAt(seg.f, off, buf)
		if err != nil || off+h.size() > size {
			break
		}
		s.indexRecord(hashKey(string(key)), slot{seg: seg.id, off: off, size: h.size(), written: h.written, deleted: h.deleted})
		off += h.size()
	}
	seg.scanned = off
}

// forget drops the segments gone (removed from the directory) with every index entry pointing
// into them, and closes them. A Get reading one at that moment gets a miss.
func (s *DiskStore) forget(gone []*segment) {
	if len(gone) == 0 {
		return
	}
	s.writeMu.Lock()
	if slices.Contains(gone, s.active) {
		s.seal() // removed under this process: the next record starts a new segment
	}
	s.writeMu.Unlock()
	s.mu.Lock()
	ids := map[uint32]bool{}
	for _, seg := range gone {
		delete(s.segs, seg.name)
		delete(s.byID, seg.id)
		ids[seg.id] = true
	}
	for h, sl := range s.index {
		if ids[sl.seg] {
			delete(s.index, h)
		}
	}
	s.mu.Unlock()
	for _, seg := range gone {
		seg.f.Close()
	}
}

// headAt reads and checks the head and key of the record at off in f, reading into buf first (a
// key longer than buf holds is read again whole).
func headAt(f *os.File, off int64, buf []byte) (recordHead, []byte, error) {
	n, _ := f.ReadAt(buf, off)
	h, key, ok, err := parseHead(buf[:n])
	if err != nil || ok {
		return h, key, err
	}
	whole := make([]byte, headLen+h.keyLen)
	n, _ = f.ReadAt(whole, off)
	if h, key, ok, err = parseHead(whole[:n]); err == nil && !ok {
		err = fmt.Errorf("%w: the record ends in its key", ErrCorrupt)
	}
	return h, key, err
}
