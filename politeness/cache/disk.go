package cache

// This file is the disk store's contract, its reads and its writes; disk_segments.go keeps the
// segment files and the index in step with the directory.

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultDiskBytes is a [DiskStore]'s size limit when none is given.
const DefaultDiskBytes = 1 << 30

// ErrClosed: a write to a [DiskStore] after its Close.
var ErrClosed = errors.New("cache: the disk store is closed")

// DiskStore is a [Store] in a directory, the default for crawls.
//
// Records are appended to segment files, each written by one process at a time, so storing a page
// costs one write to a file already open instead of a new file (creating a file costs a file
// system far more than appending to one: 100–300 µs of CPU against 5 µs for an 8 KB page on the
// development machine). A process that opens the store goes on with the newest segment that has
// room, that ends with a whole record and that no running process writes (a lock on the file says
// which are written; the system releases it when the writer exits), so runs one after another
// share a file; one that finds none free starts its own. A segment holds a sixteenth of the size
// limit (64 MiB by default), so a process keeps a few dozen files open at most.
//
// Each process keeps an index in memory of the newest record of every key (about 100 bytes a
// record: some 14 MB for a full 1 GiB of 8 KB pages), built when the store is opened by reading
// each record's head (about half a second for a full directory), and brought up to date with the
// records other processes append at most every 200 ms, when a Get needs it. So several processes
// may share one directory: a record another process commits is seen within that time, and of two
// records of one key the later written wins in every process. Open one store per directory per
// process (the door does so for the default directory) and Close it when done, which frees its
// segment for the next process.
//
// Every record carries its lengths and CRC-32Cs, checked before any byte is served: a truncated
// or damaged record is a miss ([ErrCorrupt]), never served, and the response stored again
// replaces it. Records are not synced to the disk one by one; after a crash the records a process
// was writing may be cut short, which their checks turn into misses. A write that fails (a full
// disk) fails the Commit, and the segment is cut back to its last whole record.
//
// A body is collected in memory up to 256 KiB while it is stored; a larger one goes to a
// temporary file, then to the end of the segment (or, above a quarter of a segment, becomes a
// segment of its own). A body larger than an eighth of the size limit is not kept
// ([ErrTooLarge]). The size limit is enforced by each process: when its running total passes the
// limit it removes whole segments that no process is writing, least recently written first, until
// the directory is under 90 % of the limit. A deletion is a record too, so a key deleted by one process is deleted in
// all; eviction writes a deletion again when it removes it while another segment may still hold
// an older record of its key. (An older record of a key whose newest record was evicted may be
// served again, judged by its own age like any stored response.)
//
// A 304's new metadata rewrites the record, body copied ([UpdateEntry]).
//
// Create one with [NewDiskStore]; the zero value is not usable.
type DiskStore struct {
	dir       string // <dir>/v3: the segment files
	tmp       string // <dir>/v3/tmp: bodies too large to collect in memory, while they are written
	maxBytes  int64
	maxBody   int64 // the largest body kept
	segCap    int64 // a segment is sealed once the next record would take it past this
	log       *slog.Logger
	now       func() time.Time // record times and the refresh interval; tests replace it
	tmpMaxAge time.Duration

	mu     sync.RWMutex
	index  map[keyHash]slot    // the newest record of each key this process knows
	segs   map[string]*segment // every segment file this process has open, by name
	byID   map[uint32]*segment // the same, by id
	lastID uint32

	writeMu     sync.Mutex
	active      *segment // the segment this process appends to; nil until its first record
	activeFile  *os.File // active, open for writing and locked against other writers
	activeOff   int64    // where active's next record goes
	lastWritten int64    // the last record time given, so this process's times increase

	closed   atomic.Bool  // after Close: Get misses, writes fail
	scanMu   sync.Mutex   // one refresh at a time
	nextScan atomic.Int64 // Unix nanoseconds after which a Get refreshes the index
	used     atomic.Int64 // approximate bytes in the directory
	evictMu  sync.Mutex
	// evictAbove is the size past which the next eviction runs, when the last one could not get
	// under the limit (every segment it would remove was being written): a tenth of the limit
	// more, so that each write does not try again.
	evictAbove atomic.Int64
}

// DiskOptions configure a [DiskStore]. The zero value is a 1 GiB store that logs nothing.
type DiskOptions struct {
	MaxBytes int64        // size limit of the directory; 0 = DefaultDiskBytes
	Logger   *slog.Logger // records damaged entries and files the store could not read; nil = discard
}

// DefaultDir returns the directory crawls use when the caller names none:
// <user cache dir>/etiquette/http (os.UserCacheDir).
func DefaultDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("cache: no user cache directory (set $XDG_CACHE_HOME or pass a directory): %w", err)
	}
	return filepath.Join(d, "etiquette", "http"), nil
}

// Sizes that shape a DiskStore's files and memory.
const (
	// collectBytes is the record size up to which a body being stored is collected in memory.
	collectBytes = 256 << 10
	// wholeRecordBytes is the size up to which Get reads a record in one go and serves its body
	// from memory; a larger body is checked in one pass and then streamed from the file.
	wholeRecordBytes = 256 << 10
	// refreshEvery is how often, at most, a Get looks for records other processes appended.
	refreshEvery = 200 * time.Millisecond
)

// NewDiskStore opens (creating it if needed) a store in dir.
func NewDiskStore(dir string, o DiskOptions) (*DiskStore, error) {
	if dir == "" {
		return nil, errors.New("cache: NewDiskStore needs a directory (see DefaultDir)")
	}
	root := filepath.Join(dir, layout)
	tmp := filepath.Join(root, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("cache: creating the cache directory: %w", err)
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultDiskBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &DiskStore{dir: root, tmp: tmp, maxBytes: o.MaxBytes, maxBody: o.MaxBytes / 8,
		segCap: max(o.MaxBytes/16, 1), log: o.Logger, now: time.Now, tmpMaxAge: time.Hour,
		index: map[keyHash]slot{}, segs: map[string]*segment{}, byID: map[uint32]*segment{}}
	for _, old := range oldLayouts {
		// Records of an older layout are never found again; without this they would hold their
		// space for good, since eviction sees only the current layout.
		if p := filepath.Join(dir, old); dirExists(p) {
			o.Logger.Info("cache: removing records of an older layout", "dir", p)
			if err := os.RemoveAll(p); err != nil {
				o.Logger.Warn("cache: removing records of an older layout failed", "dir", p, "err", err)
			}
		}
	}
	s.removeOldTemporaries()
	s.refresh()
	s.resumeIdleSegment()
	return s, nil
}

// Close releases the store's files: the segment this process appended to becomes free for
// another process to go on with. Records committed before are on disk (not synced). After Close
// every Get is a miss and every write fails with [ErrClosed].
func (s *DiskStore) Close() error {
	s.writeMu.Lock()
	s.closed.Store(true)
	s.seal()
	s.writeMu.Unlock()
	s.scanMu.Lock() // a refresh under way ends before the files close
	defer s.scanMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, seg := range s.segs {
		seg.f.Close()
		delete(s.segs, name)
		delete(s.byID, seg.id)
	}
	clear(s.index)
	return nil
}

// layout names the directory of the current layout under a store's directory, and oldLayouts
// those of earlier ones (v1: a file per record two directory levels down; v2: a file per record
// in 256 directories).
const layout = "v3"

var oldLayouts = []string{"v1", "v2"}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// Get implements [Store]. It verifies the whole record, including the body's checksum, before
// returning it; a damaged record is dropped and reported as [ErrCorrupt].
func (s *DiskStore) Get(key string) (*Entry, io.ReadCloser, error) {
	if s.closed.Load() {
		return nil, nil, fmt.Errorf("%w: %s (the store is closed)", ErrNotFound, key)
	}
	if s.now().UnixNano() >= s.nextScan.Load() {
		s.refresh()
	}
	h := hashKey(key)
	s.mu.RLock()
	sl, ok := s.index[h]
	seg := s.byID[sl.seg]
	s.mu.RUnlock()
	if !ok || sl.deleted || seg == nil {
		return nil, nil, fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	if sl.size > wholeRecordBytes {
		return s.stream(h, seg, sl, key)
	}
	b := make([]byte, sl.size)
	if _, err := seg.f.ReadAt(b, sl.off); err != nil {
		if errors.Is(err, fs.ErrClosed) {
			// Its segment was removed (eviction) after the index was read.
			return nil, nil, fmt.Errorf("%w: %s", ErrNotFound, key)
		}
		return nil, nil, s.dropCorrupt(h, seg, sl, fmt.Errorf("%w: reading %d bytes: %v", ErrCorrupt, sl.size, err))
	}
	e, body, err := decodeRecord(b, key)
	if err != nil {
		return nil, nil, s.dropCorrupt(h, seg, sl, err)
	}
	return e, io.NopCloser(bytes.NewReader(body)), nil
}

// stream serves a record too large to read whole: its head and metadata are checked, then its
// body in one pass over the file, which is then served from a descriptor of its own (so that an
// eviction closing the segment does not cut the body short).
func (s *DiskStore) stream(h keyHash, seg *segment, sl slot, key string) (*Entry, io.ReadCloser, error) {
	f, err := openFile(filepath.Join(s.dir, seg.name), os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("cache: opening %s: %w", seg.name, err)
	}
	e, body, err := checkStreamed(f, sl, key)
	if err != nil {
		f.Close()
		return nil, nil, s.dropCorrupt(h, seg, sl, err)
	}
	return e, &sectionCloser{body, f}, nil
}

// checkStreamed checks the record at sl in f and returns its entry and a reader of its body.
func checkStreamed(f *os.File, sl slot, key string) (*Entry, *io.SectionReader, error) {
	head := make([]byte, headLen+len(key))
	if _, err := f.ReadAt(head, sl.off); err != nil {
		return nil, nil, fmt.Errorf("%w: reading a record's head: %v", ErrCorrupt, err)
	}
	h, k, ok, err := parseHead(head)
	switch {
	case err != nil:
		return nil, nil, err
	case !ok || string(k) != key:
		return nil, nil, fmt.Errorf("%w: record belongs to another key", ErrCorrupt)
	case h.deleted || h.size() != sl.size:
		return nil, nil, fmt.Errorf("%w: the record is not the one indexed", ErrCorrupt)
	}
	meta := make([]byte, h.metaLen)
	if _, err := f.ReadAt(meta, sl.off+headLen+int64(h.keyLen)); err != nil {
		return nil, nil, fmt.Errorf("%w: reading metadata: %v", ErrCorrupt, err)
	}
	e, err := decodeMeta(h, meta, key)
	if err != nil {
		return nil, nil, err
	}
	body := io.NewSectionReader(f, sl.off+h.bodyOffset(), h.bodyLen)
	sum := crc32.New(crcTable)
	if _, err := io.Copy(sum, body); err != nil {
		return nil, nil, fmt.Errorf("%w: reading body: %v", ErrCorrupt, err)
	}
	if sum.Sum32() != h.bodyCRC {
		return nil, nil, fmt.Errorf("%w: body checksum mismatch", ErrCorrupt)
	}
	return e, io.NewSectionReader(f, sl.off+h.bodyOffset(), h.bodyLen), nil
}

// dropCorrupt forgets the damaged record sl of h in seg (unless a newer one took its place) and
// returns err. The bytes stay in their segment until it is removed; the record stored next
// replaces it.
func (s *DiskStore) dropCorrupt(h keyHash, seg *segment, sl slot, err error) error {
	s.log.Warn("cache: dropping a damaged entry", "segment", seg.name, "offset", sl.off, "err", err)
	s.mu.Lock()
	if cur, ok := s.index[h]; ok && cur == sl {
		delete(s.index, h)
	}
	s.mu.Unlock()
	return err
}

type sectionCloser struct {
	*io.SectionReader
	f *os.File
}

func (s *sectionCloser) Close() error { return s.f.Close() }

// Put implements [Store].
func (s *DiskStore) Put(key string, e *Entry) (BodyWriter, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if e.Size > s.maxBody {
		_ = s.Delete(key)
		return nil, fmt.Errorf("%w: %d bytes, the disk store keeps at most %d per body (an eighth of DiskOptions.MaxBytes)",
			ErrTooLarge, e.Size, s.maxBody)
	}
	if len(key) > maxKeyLen {
		return nil, fmt.Errorf("cache: a key of %d bytes is longer than the disk store's %d", len(key), maxKeyLen)
	}
	meta, err := encodeMeta(key, e)
	if err != nil {
		return nil, err
	}
	buf := recordBuffers.Get().(*[]byte)
	return &diskWriter{s: s, key: key, buf: buf, rec: startRecord((*buf)[:0], key, meta), metaLen: len(meta),
		metaCRC: crc32c(meta)}, nil
}

// recordBuffers holds the buffers records are collected in, so that storing a page allocates none.
var recordBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// Delete implements [Store]: it appends a record that deletes key, in every process.
func (s *DiskStore) Delete(key string) error {
	if len(key) > maxKeyLen {
		return nil // never stored
	}
	rec := startRecord(nil, key, nil)
	return s.append(key, rec, recordHead{deleted: true, keyLen: len(key), metaCRC: crc32c(nil), bodyCRC: crc32c(nil)})
}

// diskWriter collects a record: in memory (rec) up to collectBytes, then in a temporary file.
type diskWriter struct {
	s        *DiskStore
	key      string
	buf      *[]byte // from recordBuffers; nil once returned
	rec      []byte  // head, key, metadata and the body so far, while in memory
	spill    *os.File
	metaLen  int
	metaCRC  uint32
	crc      uint32 // of the body so far
	n        int64
	tooLarge bool
	done     bool
}

func (w *diskWriter) Write(p []byte) (int, error) {
	switch {
	case w.done:
		return 0, errors.New("cache: write after commit or abort")
	case w.tooLarge:
		return 0, ErrTooLarge
	case w.n+int64(len(p)) > w.s.maxBody:
		w.tooLarge = true
		w.discard()
		return 0, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, w.s.maxBody)
	}
	if w.spill == nil && len(w.rec)+len(p) > collectBytes {
		if err := w.startSpill(); err != nil {
			return 0, err
		}
	}
	if w.spill != nil {
		if _, err := w.spill.Write(p); err != nil {
			return 0, fmt.Errorf("cache: writing %s: %w", w.key, err)
		}
	} else {
		w.rec = append(w.rec, p...)
	}
	w.crc = crc32.Update(w.crc, crcTable, p)
	w.n += int64(len(p))
	return len(p), nil
}

// startSpill moves the record collected so far to a temporary file, which takes the rest.
func (w *diskWriter) startSpill() error {
	f, err := createTemp(w.s.tmp)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(w.s.tmp, 0o755); err == nil {
			f, err = createTemp(w.s.tmp)
		}
	}
	if err != nil {
		return fmt.Errorf("cache: creating a temporary file in %s: %w", w.s.tmp, err)
	}
	if _, err := f.Write(w.rec); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("cache: writing %s: %w", w.key, err)
	}
	w.spill = f
	// Keep the head, key and metadata: Commit fills in the head and writes it over the file's.
	w.rec = w.rec[:headLen+len(w.key)+w.metaLen]
	return nil
}

func (w *diskWriter) Commit() error {
	if w.done {
		return nil
	}
	if w.tooLarge {
		w.done = true
		_ = w.s.Delete(w.key) // superseded by a body too large to keep
		return fmt.Errorf("%w: more than %d bytes", ErrTooLarge, w.s.maxBody)
	}
	w.done = true
	h := recordHead{keyLen: len(w.key), metaLen: w.metaLen, bodyLen: w.n, metaCRC: w.metaCRC, bodyCRC: w.crc}
	var err error
	if w.spill != nil {
		err = w.s.appendSpilled(w.key, w.spill, w.rec, h)
		w.spill = nil
	} else {
		err = w.s.append(w.key, w.rec, h)
	}
	w.release()
	return err
}

func (w *diskWriter) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.discard()
}

func (w *diskWriter) discard() {
	if w.spill != nil {
		w.spill.Close()
		os.Remove(w.spill.Name())
		w.spill = nil
	}
	w.release()
}

// release returns the record buffer to the pool, unless a large body grew it.
func (w *diskWriter) release() {
	if w.buf != nil {
		if cap(w.rec) <= 2*collectBytes {
			*w.buf = w.rec[:0]
			recordBuffers.Put(w.buf)
		}
		w.buf, w.rec = nil, nil
	}
}

// append writes rec (a record whose head h describes) at the end of this process's segment and
// indexes it. The record's time is given here, unless h carries one (a deletion carried forward by
// evict keeps the time of the record it stands for).
func (s *DiskStore) append(key string, rec []byte, h recordHead) error {
	k := hashKey(key)
	s.writeMu.Lock()
	if h.written == 0 {
		h.written = s.stamp(k)
	}
	finishRecord(rec, h)
	seg, err := s.segmentFor(int64(len(rec)))
	if err == nil {
		if _, err = s.activeFile.WriteAt(rec, s.activeOff); err != nil {
			s.writeFailed()
		}
	}
	if err != nil {
		s.writeMu.Unlock()
		return fmt.Errorf("cache: writing %s: %w", key, err)
	}
	off := s.activeOff
	s.activeOff += int64(len(rec))
	s.writeMu.Unlock()
	s.indexRecord(k, slot{seg: seg.id, off: off, size: int64(len(rec)), written: h.written, deleted: h.deleted})
	s.grow(int64(len(rec)))
	return nil
}

// appendSpilled stores the record in the temporary file f, whole but for its head (head holds the
// head's room, the key and the metadata): copied to the end of this process's segment, or, when
// it would take more than a quarter of a segment, made a segment of its own.
func (s *DiskStore) appendSpilled(key string, f *os.File, head []byte, h recordHead) error {
	k := hashKey(key)
	s.writeMu.Lock()
	h.written = s.stamp(k)
	s.writeMu.Unlock()
	finishRecord(head, h)
	if _, err := f.WriteAt(head[:headLen], 0); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("cache: writing %s: %w", key, err)
	}
	if h.size() > s.segCap/4 {
		var seg *segment
		err := ErrClosed
		if !s.closed.Load() {
			seg, err = s.place(f, f.Name(), s.segmentName())
		}
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			return fmt.Errorf("cache: writing %s: %w", key, err)
		}
		s.indexRecord(k, slot{seg: seg.id, off: 0, size: h.size(), written: h.written})
		s.grow(h.size())
		return nil
	}
	defer os.Remove(f.Name())
	defer f.Close()
	s.writeMu.Lock()
	seg, err := s.segmentFor(h.size())
	if err == nil {
		if err = copyAt(s.activeFile, s.activeOff, f, h.size()); err != nil {
			s.writeFailed()
		}
	}
	if err != nil {
		s.writeMu.Unlock()
		return fmt.Errorf("cache: writing %s: %w", key, err)
	}
	off := s.activeOff
	s.activeOff += h.size()
	s.writeMu.Unlock()
	s.indexRecord(k, slot{seg: seg.id, off: off, size: h.size(), written: h.written})
	s.grow(h.size())
	return nil
}

// copyAt copies the first n bytes of src to dst at offset off. Through os.File's ReadFrom, the
// kernel copies them (copy_file_range on Linux) without passing them through this process.
func copyAt(dst *os.File, off int64, src *os.File, n int64) error {
	if _, err := dst.Seek(off, io.SeekStart); err != nil {
		return err
	}
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return err
	}
	copied, err := io.Copy(dst, io.LimitReader(src, n))
	if err == nil && copied != n {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// stamp returns the time of a record of key k being written: now, but after every earlier record
// of this process even if the wall clock stepped back, and after the newest record of k known
// (another process's clock may run ahead). The caller holds writeMu.
func (s *DiskStore) stamp(k keyHash) int64 {
	s.mu.RLock()
	cur := s.index[k]
	s.mu.RUnlock()
	t := max(s.now().UnixNano(), s.lastWritten+1)
	s.lastWritten = t // not the key's time: a clock ahead elsewhere must not move this one
	return max(t, cur.written+1)
}

// grow counts n more bytes in the directory and evicts when the limit is passed.
func (s *DiskStore) grow(n int64) {
	if s.used.Add(n) > max(s.maxBytes, s.evictAbove.Load()) {
		s.evict()
	}
}

// tmpPrefix starts the names of temporary files; those older than tmpMaxAge were left by a
// process that died while writing, and are removed.
const tmpPrefix = ".tmp-"

// createTemp creates a new, empty temporary file in dir, as os.CreateTemp does, through openFile.
func createTemp(dir string) (*os.File, error) {
	for range 10000 {
		f, err := openFile(filepath.Join(dir, tmpPrefix+randomHex()), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, &os.PathError{Op: "createtemp", Path: dir + "/" + tmpPrefix + "*", Err: fs.ErrExist}
}

// removeOldTemporaries removes the temporary files older than tmpMaxAge.
func (s *DiskStore) removeOldTemporaries() {
	entries, _ := os.ReadDir(s.tmp)
	for _, d := range entries {
		if fi, err := d.Info(); err == nil && s.now().Sub(fi.ModTime()) > s.tmpMaxAge {
			_ = os.Remove(filepath.Join(s.tmp, d.Name()))
		}
	}
}
