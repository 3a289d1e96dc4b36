package cache

// This file is the disk store's contract, its opening and closing, and its reads; disk_write.go
// stores records, disk_segments.go chooses the segment they go to, disk_index.go keeps the index
// in step with the directory, disk_evict.go keeps the directory under its limit.

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
// ([ErrTooLarge]). The size limit is enforced by each process: when its running total (which
// counts the other processes' bytes at each refresh, and a refresh is also due after every tenth
// of the limit it writes) passes the limit, it removes whole segments that no process is writing,
// least recently written first, until the directory is under 90 % of the limit; one process
// evicts at a time. Several processes writing at full speed from an empty directory may pass the
// limit by up to half for a moment. Temporary files count once they become segments; those of a
// process that died are removed when they are a minute old.
//
// A deletion is a record too, so a key deleted by one process is deleted in all; eviction writes
// a deletion again when it removes it while another segment may still hold an older record of its
// key. (An older record of a key whose newest record was evicted may be served again, judged by
// its own age like any stored response.)
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
	// sinceRefresh counts the bytes this process wrote since the last refresh.
	sinceRefresh atomic.Int64
	evictMu      sync.Mutex
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
