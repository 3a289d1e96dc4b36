package cache

// This file stores records: it collects a body (in memory, or in a temporary file when large),
// gives the record its time, appends it to this process's segment and indexes it.

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

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
	if len(meta) > maxMetaLen {
		return nil, fmt.Errorf("cache: the metadata of %s takes %d bytes, more than a record holds (%d)", key, len(meta), maxMetaLen)
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
	failed   error // a write to the temporary file failed: the body is incomplete
	done     bool
}

func (w *diskWriter) Write(p []byte) (int, error) {
	switch {
	case w.done:
		return 0, errors.New("cache: write after commit or abort")
	case w.tooLarge:
		return 0, ErrTooLarge
	case w.failed != nil:
		return 0, w.failed
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
			w.failed = fmt.Errorf("cache: writing %s: %w", w.key, err)
			return 0, w.failed
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
	if w.failed != nil {
		w.discard()
		return w.failed
	}
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
			// Written whole: unlocked, so that it is evicted (and resumed) like any segment.
			_ = unlockFile(f)
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
	// What the other processes wrote is counted at a refresh: one is due every 200 ms, and after
	// every tenth of the limit this process writes (processes starting together on an empty
	// directory would otherwise each fill it before they count each other).
	if s.sinceRefresh.Add(n) > s.maxBytes/10 || s.now().UnixNano() >= s.nextScan.Load() {
		s.refresh()
	}
	if s.used.Add(n) > max(s.maxBytes, s.evictAbove.Load()) {
		s.evict()
	}
}

// tmpPrefix starts the names of temporary files. Each is locked by the process writing it, so a
// temporary file that can be locked was left by a process that died (and is removed).
const tmpPrefix = ".tmp-"

// createTemp creates a new, empty temporary file in dir, as os.CreateTemp does, through openFile,
// and locks it.
func createTemp(dir string) (*os.File, error) {
	for range 10000 {
		f, err := openFile(filepath.Join(dir, tmpPrefix+randomHex()), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err == nil {
			_ = lockFile(f) // without a lock, the age rule protects it
		}
		return f, err
	}
	return nil, &os.PathError{Op: "createtemp", Path: dir + "/" + tmpPrefix + "*", Err: fs.ErrExist}
}

// removeOldTemporaries removes the temporary files no process is writing: those older than a
// minute that it can lock, or, where there are no locks, those older than tmpMaxAge.
func (s *DiskStore) removeOldTemporaries() {
	entries, _ := os.ReadDir(s.tmp)
	for _, d := range entries {
		p := filepath.Join(s.tmp, d.Name())
		f, err := openFile(p, os.O_RDONLY, 0)
		if err != nil {
			continue
		}
		// A file just created is locked a moment later: only one older than a minute is judged
		// by its lock.
		fi, err := f.Stat()
		if err == nil {
			age := s.now().Sub(fi.ModTime())
			err = lockFile(f)
			if (err == nil && age > time.Minute) || (errors.Is(err, errors.ErrUnsupported) && age > s.tmpMaxAge) {
				_ = os.Remove(p)
			}
		}
		f.Close()
	}
}
