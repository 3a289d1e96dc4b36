package cache

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultDiskBytes is a [DiskStore]'s size limit when none is given.
const DefaultDiskBytes = 1 << 30

// DiskStore is a [Store] in a directory, the default for crawls. Bodies stream to and from files,
// so a body of any size costs a buffer of memory.
//
// Several processes may share one directory: every record is written to a temporary file and
// renamed into place (readers see the old record or the new one, never half of one); records live
// in 256 directories named by the first byte of the key's SHA-256 (a million records make 4,000
// files a directory, which the file system indexes; a deeper tree would cost a directory creation
// for most of the first records a crawl writes); and each record carries lengths and CRC-32s that
// are checked before any byte is served, so a truncated or damaged file is a miss and is replaced,
// never served. The size limit is enforced by each process: when its running total passes the
// limit it walks the directory and removes the least recently written records until the directory
// is under 90 % of the limit.
//
// Records are not synced to the disk one by one: after a crash a record may be empty or short,
// which its trailer check turns into a miss, and the cache trades that for not waiting for the
// disk on every response.
//
// A record's metadata and body share one file, so that a rename replaces both at once; a 304's
// new metadata therefore rewrites the record, body streamed ([UpdateEntry]; DiskStore is not an
// [Updater]).
//
// Create one with [NewDiskStore]; the zero value is not usable.
type DiskStore struct {
	dir      string
	maxBytes int64
	log      *slog.Logger

	used      atomic.Int64 // approximate bytes in the directory, from the last walk plus writes since
	evictMu   sync.Mutex
	tmpMaxAge time.Duration
}

// DiskOptions configure a [DiskStore]. The zero value is a 1 GiB store that logs nothing.
type DiskOptions struct {
	MaxBytes int64        // size limit of the directory; 0 = DefaultDiskBytes
	Logger   *slog.Logger // records removed corrupt entries; nil = discard
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

// NewDiskStore opens (creating it if needed) a store in dir.
func NewDiskStore(dir string, o DiskOptions) (*DiskStore, error) {
	if dir == "" {
		return nil, errors.New("cache: NewDiskStore needs a directory (see DefaultDir)")
	}
	root := filepath.Join(dir, layout)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("cache: creating the cache directory: %w", err)
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultDiskBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &DiskStore{dir: root, maxBytes: o.MaxBytes, log: o.Logger, tmpMaxAge: time.Hour}
	s.used.Store(s.walkSize())
	for _, old := range oldLayouts {
		// Records of an older layout are never found again; without this they would hold their
		// space for good, since eviction walks only the current layout.
		if p := filepath.Join(dir, old); dirExists(p) {
			o.Logger.Info("cache: removing records of an older layout", "dir", p)
			if err := os.RemoveAll(p); err != nil {
				o.Logger.Warn("cache: removing records of an older layout failed", "dir", p, "err", err)
			}
		}
	}
	return s, nil
}

// layout names the directory of the current record layout under a store's directory, and
// oldLayouts those of earlier ones (v1: two directory levels, ab/cd/).
const layout = "v2"

var oldLayouts = []string{"v1"}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// path returns the record file of key: v2/ab/<sha256 hex>.
func (s *DiskStore) path(key string) string {
	sum := sha256.Sum256([]byte(key))
	var name [2 * sha256.Size]byte
	hex.Encode(name[:], sum[:])
	return filepath.Join(s.dir, string(name[:2]), string(name[:]))
}

// wholeRecordBytes is the size up to which Get reads a record in one go and serves its body from
// memory; a larger body is checked in one pass and then streamed from the file.
const wholeRecordBytes = 256 << 10

// Get implements [Store]. It verifies the whole record, including the body's checksum, before
// returning it; a damaged record is deleted and reported as [ErrCorrupt].
func (s *DiskStore) Get(key string) (*Entry, io.ReadCloser, error) {
	p := s.path(key)
	f, err := openFile(p, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("cache: opening %s: %w", p, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("cache: stat %s: %w", p, err)
	}
	if size := fi.Size(); size <= wholeRecordBytes {
		// One read instead of one per part, and the file is closed before the body is served.
		b := make([]byte, size)
		_, err := f.ReadAt(b, 0)
		f.Close()
		var e *Entry
		var body []byte
		if err == nil {
			e, body, err = decodeRecord(b, key)
		} else {
			err = fmt.Errorf("%w: reading %d bytes: %v", ErrCorrupt, size, err)
		}
		if err != nil {
			return nil, nil, s.removeCorrupt(p, fi, err)
		}
		return e, io.NopCloser(bytes.NewReader(body)), nil
	}
	e, n, crc, err := readRecord(f, fi.Size(), key)
	if err == nil {
		err = verifyBody(f, n, crc)
	}
	if err != nil {
		f.Close()
		return nil, nil, s.removeCorrupt(p, fi, err)
	}
	return e, &sectionCloser{io.NewSectionReader(f, 0, n), f}, nil
}

// removeCorrupt removes the damaged record file p (as fi described it) and returns err.
func (s *DiskStore) removeCorrupt(p string, fi os.FileInfo, err error) error {
	s.log.Warn("cache: removing a corrupt entry", "path", p, "err", err)
	// Remove only the file we judged: another process may have renamed a good one into place.
	if cur, serr := os.Stat(p); serr == nil && os.SameFile(cur, fi) {
		_ = os.Remove(p)
	}
	return err
}

type sectionCloser struct {
	*io.SectionReader
	f *os.File
}

func (s *sectionCloser) Close() error { return s.f.Close() }

// Put implements [Store].
func (s *DiskStore) Put(key string, e *Entry) (BodyWriter, error) {
	p := s.path(key)
	dir := filepath.Dir(p)
	f, err := createTemp(dir)
	if errors.Is(err, fs.ErrNotExist) {
		// The shard's first record (or someone removed the directory): create it, once.
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("cache: creating %s: %w", dir, err)
		}
		f, err = createTemp(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("cache: creating a temporary file in %s: %w", dir, err)
	}
	bw := writeBuffers.Get().(*bufio.Writer)
	bw.Reset(f)
	return &diskWriter{s: s, key: key, path: p, f: f, bw: bw, e: e.clone()}, nil
}

// tmpPrefix starts the names of records being written; a walk skips them, and removes those a
// process that died while writing left behind.
const tmpPrefix = ".tmp-"

// createTemp creates a new, empty temporary file in dir, as os.CreateTemp does, through openFile.
func createTemp(dir string) (*os.File, error) {
	var r [8]byte
	for range 10000 {
		_, _ = rand.Read(r[:])
		f, err := openFile(filepath.Join(dir, tmpPrefix+hex.EncodeToString(r[:])), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, &os.PathError{Op: "createtemp", Path: dir + "/" + tmpPrefix + "*", Err: fs.ErrExist}
}

// writeBuffers holds the buffers records are written through: a record that fits in one (most
// pages) reaches the file in a single write, and no record allocates its own.
var writeBuffers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 64<<10) }}

// Delete implements [Store].
func (s *DiskStore) Delete(key string) error {
	err := os.Remove(s.path(key))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cache: deleting %s: %w", key, err)
	}
	return nil
}

type diskWriter struct {
	s    *DiskStore
	key  string
	path string
	f    *os.File
	bw   *bufio.Writer // from writeBuffers; nil once returned
	crc  uint32        // of the body so far
	e    *Entry
	n    int64
	done bool
}

func (w *diskWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, errors.New("cache: write after commit or abort")
	}
	n, err := w.bw.Write(p)
	w.crc = crc32.Update(w.crc, crcTable, p[:n])
	w.n += int64(n)
	return n, err
}

func (w *diskWriter) Commit() error {
	if w.done {
		return nil
	}
	w.done = true
	w.e.Size = w.n
	meta, err := encodeMeta(w.key, w.e)
	if err != nil {
		w.discard()
		return err
	}
	// A bufio.Writer keeps its first error and Flush reports it.
	_, _ = w.bw.Write(meta)
	_, _ = w.bw.Write(encodeTrailer(w.n, w.crc, meta))
	if err := w.bw.Flush(); err != nil {
		w.discard()
		return fmt.Errorf("cache: writing %s: %w", w.key, err)
	}
	w.release()
	if err := w.f.Close(); err != nil {
		_ = os.Remove(w.f.Name())
		return fmt.Errorf("cache: writing %s: %w", w.key, err)
	}
	// No fsync (see DiskStore): a record cut short by a crash is a miss, never served.
	if err := renameFile(w.f.Name(), w.path); err != nil {
		_ = os.Remove(w.f.Name())
		return fmt.Errorf("cache: moving %s into place: %w", w.key, err)
	}
	size := w.n + int64(len(meta)) + trailerLen
	if w.s.used.Add(size) > w.s.maxBytes {
		w.s.evict()
	}
	return nil
}

func (w *diskWriter) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.discard()
}

func (w *diskWriter) discard() {
	w.release()
	w.f.Close()
	_ = os.Remove(w.f.Name())
}

// release returns the write buffer to the pool, dropping what it still holds.
func (w *diskWriter) release() {
	if w.bw != nil {
		w.bw.Reset(nil)
		writeBuffers.Put(w.bw)
		w.bw = nil
	}
}

type diskFile struct {
	path string
	size int64
	mod  time.Time
}

// walk lists the records under the store (and removes temporary files older than tmpMaxAge,
// left by a process that died while writing).
func (s *DiskStore) walk() []diskFile {
	var files []diskFile
	_ = filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if strings.HasPrefix(d.Name(), tmpPrefix) {
			if time.Since(fi.ModTime()) > s.tmpMaxAge {
				_ = os.Remove(p)
			}
			return nil
		}
		files = append(files, diskFile{p, fi.Size(), fi.ModTime()})
		return nil
	})
	return files
}

func (s *DiskStore) walkSize() int64 {
	var n int64
	for _, f := range s.walk() {
		n += f.size
	}
	return n
}

// evict removes the oldest records until the directory is under 90 % of the limit.
func (s *DiskStore) evict() {
	if !s.evictMu.TryLock() {
		return // another goroutine of this process is already evicting
	}
	defer s.evictMu.Unlock()
	files := s.walk()
	var total int64
	for _, f := range files {
		total += f.size
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod.Before(files[j].mod) })
	target := s.maxBytes / 10 * 9
	for _, f := range files {
		if total <= target {
			break
		}
		// A file another process removed first counts as removed too.
		_ = os.Remove(f.path)
		total -= f.size
	}
	s.used.Store(total)
}
