package cache

// This file decides which segment file a process appends to: creating one, resuming an idle one,
// sealing it, and placing new segments in the directory.

import (
	"crypto/rand"
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
