package cache

// This file decides which segments go when the directory is full, and keeps the deletions they
// hold alive while an older record of their key remains.

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// evictLockName is the file whose lock a process holds while it evicts.
const evictLockName = "evict.lock"

// evict removes whole segments, least recently written first, until the directory is under 90 %
// of the limit.
func (s *DiskStore) evict() {
	if !s.evictMu.TryLock() {
		return // another goroutine of this process is already evicting
	}
	defer s.evictMu.Unlock()
	// One process evicts at a time: two would each take the segments the other has locked for
	// removal for segments being written.
	dirLock, err := openFile(filepath.Join(s.dir, evictLockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		s.log.Warn("cache: cannot open the eviction lock; not evicting", "err", err)
		return
	}
	defer dirLock.Close()
	if err := lockFile(dirLock); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return // another process is evicting
	}
	// Every segment read to its end first, so that the deletions of those removed can be carried.
	s.scanMu.Lock()
	s.refreshLocked()
	s.scanMu.Unlock()
	type file struct {
		name string
		size int64
		mod  time.Time
	}
	var files []file
	var total int64
	entries, _ := os.ReadDir(s.dir)
	for _, d := range entries {
		if !isSegmentName(d.Name()) {
			continue
		}
		if fi, err := d.Info(); err == nil {
			files = append(files, file{d.Name(), fi.Size(), fi.ModTime()})
			total += fi.Size()
		}
	}
	slices.SortFunc(files, func(a, b file) int { return a.mod.Compare(b.mod) })
	target := s.maxBytes / 10 * 9
	var removed []string
	var locks []*os.File // held until the segments are removed, so that no process resumes one
	defer func() {
		for _, l := range locks {
			l.Close()
		}
	}()
	for _, f := range files {
		if total <= target {
			break
		}
		// A segment a process is writing (this one's too) is locked, and stays: its writer
		// would go on appending to a removed file that no other process reads.
		l, err := openFile(filepath.Join(s.dir, f.name), os.O_RDONLY, 0)
		if err != nil {
			continue
		}
		if err := lockFile(l); err != nil && !errors.Is(err, errors.ErrUnsupported) {
			l.Close()
			continue
		}
		locks = append(locks, l)
		removed = append(removed, f.name)
		total -= f.size
	}
	s.carryDeletions(removed)
	var gone []*segment
	for _, name := range removed {
		// A segment another process removed first counts as removed too; one that cannot be
		// removed stays known (and its size counted, at the next refresh).
		if err := os.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("cache: removing a segment failed", "segment", name, "err", err)
			continue
		}
		s.mu.RLock()
		seg := s.segs[name]
		s.mu.RUnlock()
		if seg != nil {
			gone = append(gone, seg)
		}
	}
	s.forget(gone)
	s.used.Store(total)
	s.evictAbove.Store(0)
	if total > target {
		s.evictAbove.Store(total + s.maxBytes/10)
	}
	s.removeOldTemporaries()
}

// carryDeletions writes again, at the end of this process's segment and with their own times,
// the deletions that the segments about to be removed hold and that another segment may hold an
// older record of: removing them would bring back what they deleted. A deletion that no
// remaining segment could contradict goes with its segment.
func (s *DiskStore) carryDeletions(names []string) {
	s.mu.RLock()
	leaving := map[uint32]*segment{}
	for _, name := range names {
		if seg := s.segs[name]; seg != nil {
			leaving[seg.id] = seg
		}
	}
	oldestLeft := int64(math.MaxInt64)
	for _, seg := range s.segs {
		if leaving[seg.id] == nil {
			oldestLeft = min(oldestLeft, seg.minWritten)
		}
	}
	var carry []slot
	for _, sl := range s.index {
		if sl.deleted && leaving[sl.seg] != nil && sl.written > oldestLeft {
			carry = append(carry, sl)
		}
	}
	s.mu.RUnlock()
	for _, sl := range carry {
		key, err := readKey(leaving[sl.seg].f, sl.off)
		if err != nil {
			continue // damaged: it can be carried no more than read
		}
		rec := startRecord(nil, key, nil)
		_ = s.append(key, rec, recordHead{deleted: true, keyLen: len(key), written: sl.written,
			metaCRC: crc32c(nil), bodyCRC: crc32c(nil)})
	}
}

// readKey reads the key of the record at off in f, checking its head.
func readKey(f *os.File, off int64) (string, error) {
	_, key, err := headAt(f, off, make([]byte, headLen))
	return string(key), err
}
