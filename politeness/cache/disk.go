package cache

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
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
// in directories sharded by the first bytes of the key's SHA-256 (no directory grows to millions
// of files); and each record carries lengths and CRC-32s that are checked before any byte is
// served, so a truncated or damaged file is a miss and is replaced, never served. The size limit
// is enforced by each process: when its running total passes the limit it walks the directory and
// removes the least recently written records until the directory is under 90 % of the limit.
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
	root := filepath.Join(dir, "v1")
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
	return s, nil
}

// path returns the record file of key: v1/ab/cd/<sha256 hex>.
func (s *DiskStore) path(key string) string {
	sum := sha256.Sum256([]byte(key))
	h := hex.EncodeToString(sum[:])
	return filepath.Join(s.dir, h[:2], h[2:4], h)
}

// Get implements [Store]. It verifies the whole record, including the body's checksum, before
// returning it; a damaged record is deleted and reported as [ErrCorrupt].
func (s *DiskStore) Get(key string) (*Entry, io.ReadCloser, error) {
	p := s.path(key)
	f, err := os.Open(p)
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
	e, n, crc, err := readRecord(f, fi.Size(), key)
	if err == nil {
		err = verifyBody(f, n, crc)
	}
	if err != nil {
		f.Close()
		s.log.Warn("cache: removing a corrupt entry", "path", p, "err", err)
		// Remove only the file we judged: another process may have renamed a good one into place.
		if cur, serr := os.Stat(p); serr == nil && os.SameFile(cur, fi) {
			_ = os.Remove(p)
		}
		return nil, nil, err
	}
	return e, &sectionCloser{io.NewSectionReader(f, 0, n), f}, nil
}

type sectionCloser struct {
	*io.SectionReader
	f *os.File
}

func (s *sectionCloser) Close() error { return s.f.Close() }

// Put implements [Store].
func (s *DiskStore) Put(key string, e *Entry) (BodyWriter, error) {
	p := s.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("cache: creating %s: %w", filepath.Dir(p), err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("cache: creating a temporary file in %s: %w", filepath.Dir(p), err)
	}
	w := &diskWriter{s: s, key: key, path: p, f: f, e: e.clone(), crc: crc32.New(crcTable)}
	w.bw = bufio.NewWriterSize(io.MultiWriter(f, w.crc), 64<<10)
	return w, nil
}

// Delete implements [Store].
func (s *DiskStore) Delete(key string) error {
	err := os.Remove(s.path(key))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cache: deleting %s: %w", key, err)
	}
	return nil
}

// UpdateEntry implements [Updater] by copying the body into a new record (streamed), because a
// record's metadata and body share one file so that a rename replaces both at once.
func (s *DiskStore) UpdateEntry(key string, e *Entry) error {
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
		return fmt.Errorf("cache: rewriting %s: %w", key, err)
	}
	return w.Commit()
}

type diskWriter struct {
	s    *DiskStore
	key  string
	path string
	f    *os.File
	bw   *bufio.Writer
	crc  hash.Hash32
	e    *Entry
	n    int64
	done bool
}

func (w *diskWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, errors.New("cache: write after commit or abort")
	}
	n, err := w.bw.Write(p)
	w.n += int64(n)
	return n, err
}

func (w *diskWriter) Commit() error {
	if w.done {
		return nil
	}
	w.done = true
	if err := w.bw.Flush(); err != nil {
		w.discard()
		return fmt.Errorf("cache: writing %s: %w", w.key, err)
	}
	w.e.Size = w.n
	meta, err := encodeMeta(w.key, w.e)
	if err != nil {
		w.discard()
		return err
	}
	if _, err := w.f.Write(append(meta, encodeTrailer(w.n, w.crc.Sum32(), meta)...)); err != nil {
		w.discard()
		return fmt.Errorf("cache: writing %s: %w", w.key, err)
	}
	if err := w.f.Close(); err != nil {
		_ = os.Remove(w.f.Name())
		return fmt.Errorf("cache: writing %s: %w", w.key, err)
	}
	// No fsync: after a crash a record may be empty or short, which the trailer check turns into
	// a miss; the cache trades that for not forcing a disk flush per response.
	if err := os.Rename(w.f.Name(), w.path); err != nil {
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
	w.f.Close()
	_ = os.Remove(w.f.Name())
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
		if strings.HasPrefix(d.Name(), ".tmp-") {
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
