package cache

// This file keeps a disk store's segment files and its index in step with the directory: which
// record of a key is the newest, which segments other processes added or removed, and which
// segments go when the directory is full.

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// segment is one segment file: records appended one after another by one process at a time (the
// one that created it, or one that resumed it when it was idle).
type segment struct {
	id   uint32 // the index's name for it
	name string
	f    *os.File
	fi   os.FileInfo // the file as it was opened, to notice it was removed or replaced
	// placing: registered under its name, not yet renamed into the directory; a refresh leaves
	// it alone until then.
	placing atomic.Bool
	// scanned is the offset up to which a refresh indexed records, where the next one reads on
	// (guarded by scanMu). The segment this process appends to is not read back until it is
	// sealed.
	scanned int64
	// minWritten is the time of the oldest record other than a deletion indexed from it (guarded
	// by mu): while a segment may hold a record older than a deletion, the deletion is kept
	// (see carryDeletions).
	minWritten int64
}

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

// Segment files are named seg-<creation time, hex nanoseconds>-<random>.log.
const (
	segmentPrefix = "seg-"
	segmentSuffix = ".log"
)

func (s *DiskStore) segmentName() string {
	return fmt.Sprintf("%s%016x-%s%s", segmentPrefix, s.now().UnixNano(), randomHex(), segmentSuffix)
}

func isSegmentName(name string) bool {
	return strings.HasPrefix(name, segmentPrefix) && strings.HasSuffix(name, segmentSuffix)
}

func randomHex() string {
	var r [8]byte
	_, _ = rand.Read(r[:])
	return hex.EncodeToString(r[:])
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

// openSegment opens the segment file name (read only) and registers it, or returns the segment
// already registered under that name.
func (s *DiskStore) openSegment(name string) (*segment, error) {
	f, err := openFile(filepath.Join(s.dir, name), os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	return s.register(name, f, false)
}

// register makes f the segment name, unless a segment of that name is registered already (then
// f is closed and that one returned). placing marks a segment not yet renamed into place.
func (s *DiskStore) register(name string, f *os.File, placing bool) (*segment, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if seg, ok := s.segs[name]; ok {
		f.Close()
		return seg, nil
	}
	s.lastID++
	seg := &segment{id: s.lastID, name: name, f: f, fi: fi, minWritten: math.MaxInt64}
	seg.placing.Store(placing)
	s.segs[name] = seg
	s.byID[seg.id] = seg
	return seg, nil
}

// place registers the file f (at path, outside the directory) as the new segment name and then
// renames it into place, so that a refresh never opens it a second time in between. When the
// rename fails, f is left open for the caller to close.
func (s *DiskStore) place(f *os.File, path, name string) (*segment, error) {
	seg, err := s.register(name, f, true)
	if err != nil {
		return nil, err
	}
	if err := renameFile(path, filepath.Join(s.dir, name)); err != nil {
		s.mu.Lock()
		delete(s.segs, name)
		delete(s.byID, seg.id)
		s.mu.Unlock()
		return nil, err
	}
	seg.placing.Store(false)
	return seg, nil
}

// segmentFor returns the segment a record of n bytes is appended to, starting a new one when the
// active one would pass the segment size. The caller holds writeMu.
func (s *DiskStore) segmentFor(n int64) (*segment, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if s.active != nil && s.activeOff > 0 && s.activeOff+n > s.segCap {
		s.seal()
	}
	if s.active == nil {
		if err := s.startSegment(); err != nil {
			return nil, fmt.Errorf("starting a segment: %w", err)
		}
	}
	return s.active, nil
}

// startSegment creates a segment for this process to append to. It is created under the
// temporary directory and locked before it is placed, so no other process ever takes it for an
// idle one (see resumeIdleSegment). The caller holds writeMu.
func (s *DiskStore) startSegment() error {
	w, err := createTemp(s.tmp)
	if errors.Is(err, fs.ErrNotExist) {
		// Someone removed the directory: create it again, once.
		if err = os.MkdirAll(s.tmp, 0o755); err == nil {
			w, err = createTemp(s.tmp)
		}
	}
	if err != nil {
		return err
	}
	// Without a lock (a system or file system without flock) the segment is still this
	// process's: no process resumes a segment it cannot lock.
	_ = lockFile(w)
	r, err := openFile(w.Name(), os.O_RDONLY, 0)
	if err != nil {
		w.Close()
		os.Remove(w.Name())
		return err
	}
	seg, err := s.place(r, w.Name(), s.segmentName())
	if err != nil {
		r.Close()
		w.Close()
		os.Remove(w.Name())
		return err
	}
	s.active, s.activeFile, s.activeOff = seg, w, 0
	return nil
}

// seal stops appending to the active segment and unlocks it. The caller holds writeMu.
func (s *DiskStore) seal() {
	if s.activeFile != nil {
		s.activeFile.Close() // releases the lock
	}
	s.active, s.activeFile, s.activeOff = nil, nil, 0
}

// writeFailed handles a write to the active segment that failed (a full disk, say) and may have
// left part of a record: the segment is cut back to its last whole record and stays active, so
// that failing writes do not start a segment each; when it cannot be cut, it is sealed (and
// removed if it holds nothing). The caller holds writeMu.
func (s *DiskStore) writeFailed() {
	if s.activeFile.Truncate(s.activeOff) == nil {
		return
	}
	seg, empty := s.active, s.activeOff == 0
	s.seal()
	if empty && os.Remove(filepath.Join(s.dir, seg.name)) == nil {
		s.mu.Lock()
		delete(s.segs, seg.name)
		delete(s.byID, seg.id)
		s.mu.Unlock()
		seg.f.Close()
	}
}

// resumeIdleSegment makes the newest segment with room that no process is writing this process's
// active one, so that a directory used by many short runs does not gather a segment per run. A
// segment is being written while its writer holds a lock on it (flock), which the system releases
// when the writer exits; where there are no such locks, every process starts its own segments.
// It runs while the store is opened, after the first refresh.
func (s *DiskStore) resumeIdleSegment() {
	segs := s.segments()
	slices.SortFunc(segs, func(a, b *segment) int { return strings.Compare(b.name, a.name) })
	for _, seg := range segs {
		if seg.scanned > s.segCap/2 || seg.placing.Load() {
			continue
		}
		f, err := openFile(filepath.Join(s.dir, seg.name), os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if lockFile(f) != nil {
			f.Close()
			continue
		}
		// Locked: no process writes it, and none evicts it (eviction takes the lock too) — if it
		// is still the file in the directory.
		if cur, err := os.Stat(filepath.Join(s.dir, seg.name)); err != nil || !os.SameFile(cur, seg.fi) {
			f.Close()
			continue
		}
		fi, err := f.Stat()
		// Records its last writer added after the first refresh read it. A segment must end with
		// a whole record: writing over what a writer that died left cut short could make its
		// remains, read after the new record, look like records.
		if err == nil {
			s.scan(seg, fi.Size())
		}
		if err != nil || seg.scanned != fi.Size() {
			f.Close()
			continue
		}
		s.writeMu.Lock()
		s.active, s.activeFile, s.activeOff = seg, f, seg.scanned
		s.writeMu.Unlock()
		return
	}
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
		n, _ := seg.f.ReadAt(buf, off)
		h, key, ok, err := parseHead(buf[:n])
		if err == nil && !ok && off+headLen+int64(h.keyLen) <= size {
			long := make([]byte, headLen+h.keyLen)
			n, _ = seg.f.ReadAt(long, off)
			h, key, ok, err = parseHead(long[:n])
		}
		if err != nil || !ok || off+h.size() > size {
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

// evict removes whole segments, least recently written first, until the directory is under 90 %
// of the limit.
func (s *DiskStore) evict() {
	if !s.evictMu.TryLock() {
		return // another goroutine of this process is already evicting
	}
	defer s.evictMu.Unlock()
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
	head := make([]byte, headLen)
	if _, err := f.ReadAt(head, off); err != nil {
		return "", err
	}
	h, _, _, err := parseHead(head)
	if err != nil {
		return "", err
	}
	b := make([]byte, headLen+h.keyLen)
	if _, err := f.ReadAt(b, off); err != nil {
		return "", err
	}
	_, key, ok, err := parseHead(b)
	if err != nil || !ok {
		return "", fmt.Errorf("%w: key unreadable", ErrCorrupt)
	}
	return string(key), nil
}
