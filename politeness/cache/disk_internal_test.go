//go:build unix

package cache

// Eviction and placement cases that need the store's insides: which segment a process appends
// to, a limit changed between two evictions, a refresh running alongside writes.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

var evictBase = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func openAt(t *testing.T, dir string, limit int64, at time.Duration) *DiskStore {
	t.Helper()
	s, err := NewDiskStore(dir, DiskOptions{MaxBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	tm := evictBase.Add(at)
	s.now = func() time.Time { return tm }
	s.nextScan.Store(0)
	return s
}

func activeName(s *DiskStore) string {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.active == nil {
		return ""
	}
	return s.active.name
}

func setWritten(t *testing.T, dir, name string, d time.Duration) {
	t.Helper()
	when := time.Now().Add(d)
	if err := os.Chtimes(filepath.Join(dir, "v3", name), when, when); err != nil {
		t.Fatal(err)
	}
}

func segmentSize(t *testing.T, dir, name string) int64 {
	fi, err := os.Stat(filepath.Join(dir, "v3", name))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func directorySize(t *testing.T, dir string) int64 {
	es, _ := os.ReadDir(filepath.Join(dir, "v3"))
	var n int64
	for _, e := range es {
		if isSegmentName(e.Name()) {
			fi, _ := e.Info()
			n += fi.Size()
		}
	}
	return n
}

// evictBytes makes s evict once, with a limit that removes victim bytes' worth of the least
// recently written segments.
func evictBytes(t *testing.T, s *DiskStore, dir string, victim int64) {
	total := directorySize(t, dir)
	s.maxBytes = (total-victim)*10/9 + 10
	if s.maxBytes/10*9 >= total {
		t.Fatal("bad limit")
	}
	s.evict()
}

// A deletion carried forward by eviction replaces the original in the index even when the
// segment it goes to sorts before the original's, so that a later eviction carries it again.
func TestCarriedDeletionStaysIndexed(t *testing.T) {
	dir := t.TempDir()
	const limit = 256 << 10
	b := openAt(t, dir, limit, 1000*time.Second)
	StoreBody(t, b, "K", "old response") // S1, locked by b
	s1 := activeName(b)
	a := openAt(t, dir, limit, 500*time.Second)
	StoreBody(t, a, "F", "filler") // SA, named at 500 s < S1
	sa := activeName(a)
	c := openAt(t, dir, limit, 2000*time.Second)
	if err := c.Delete("K"); err != nil { // L named at 2000 s
		t.Fatal(err)
	}
	l := activeName(c)
	c.Close()
	a.nextScan.Store(0)
	if _, err := ReadBody(a, "K"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("before: %v", err)
	}
	setWritten(t, dir, l, -2*time.Hour)
	setWritten(t, dir, sa, time.Hour)
	setWritten(t, dir, s1, 2*time.Hour)
	evictBytes(t, a, dir, segmentSize(t, dir, l))
	a.maxBytes = 1 << 40
	a.mu.RLock()
	sl, ok := a.index[hashKey("K")]
	a.mu.RUnlock()
	if !ok || !sl.deleted {
		t.Errorf("after the deletion's segment was evicted, a's index holds %+v (present %v) for K, want the carried deletion", sl, ok)
	}
	// Now SA (holding the carried deletion) ages out, S1 still there.
	a.maxBytes = 1 << 40
	a.writeMu.Lock()
	a.seal()
	a.writeMu.Unlock()
	StoreBody(t, a, "G", "filler2")
	setWritten(t, dir, sa, -3*time.Hour)
	setWritten(t, dir, activeName(a), time.Hour)
	evictBytes(t, a, dir, segmentSize(t, dir, sa))
	b.Close()
	e := openAt(t, dir, limit, 3000*time.Second)
	if body, err := ReadBody(e, "K"); err == nil {
		t.Errorf("resurrected: K = %q after its carried deletion was evicted uncarried", body)
	}
}

// The segment a process appends to is not evicted however long ago it was written (it is
// locked), so deletions carried forward never go into a segment being removed, and a deletion
// written there stays.
func TestTheSegmentAProcessWritesIsNotEvicted(t *testing.T) {
	dir := t.TempDir()
	const limit = 4 << 20 // 256 KiB segments, bodies > 64 KiB spilled past 256 KiB go to own segments
	b := openAt(t, dir, limit, 1000*time.Second)
	StoreBody(t, b, "K", "old response") // S1
	s1 := activeName(b)
	a := openAt(t, dir, limit, 2000*time.Second)
	if err := a.Delete("K"); err != nil { // SA: a's active
		t.Fatal(err)
	}
	sa := activeName(a)
	setWritten(t, dir, s1, 2*time.Hour)
	setWritten(t, dir, sa, -2*time.Hour) // a has since stored only large bodies
	big := strings.Repeat("x", 300<<10)
	for i := range 14 {
		StoreBody(t, a, fmt.Sprintf("big %d", i), big) // each its own segment; eventually evicts
	}
	if _, err := os.Stat(filepath.Join(dir, "v3", sa)); err != nil {
		t.Errorf("the segment a process writes was evicted: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "v3", s1)); err != nil {
		t.Fatal("the old record's segment was evicted: the test proves nothing")
	}
	b.Close()
	e := openAt(t, dir, limit, 3000*time.Second)
	if body, err := ReadBody(e, "K"); err == nil {
		t.Errorf("resurrected: K = %q", body)
	}
}

// A process that has not read the directory for a while reads it before it evicts, so the
// deletions of another process's segment are carried.
func TestEvictionReadsEverySegmentBeforeRemovingAny(t *testing.T) {
	dir := t.TempDir()
	const limit = 256 << 10
	a := openAt(t, dir, limit, 500*time.Second)
	b := openAt(t, dir, limit, 1000*time.Second)
	StoreBody(t, b, "K", "old response")
	s1 := activeName(b)
	c := openAt(t, dir, limit, 2000*time.Second)
	c.Delete("K")
	l := activeName(c)
	c.Close()
	StoreBody(t, a, "F", "filler") // a writes, never reads
	setWritten(t, dir, l, -2*time.Hour)
	setWritten(t, dir, s1, 2*time.Hour)
	a.nextScan.Store(1 << 62)
	evictBytes(t, a, dir, segmentSize(t, dir, l))
	if _, err := os.Stat(filepath.Join(dir, "v3", l)); err == nil {
		t.Fatal("the deletion's segment was not evicted: the test proves nothing")
	}
	b.Close()
	e := openAt(t, dir, limit, 3000*time.Second)
	if body, err := ReadBody(e, "K"); err == nil {
		t.Errorf("resurrected: K = %q (deletion in a segment the evicting process had not read)", body)
	}
}

// A refresh running while segments are placed never forgets one that is not yet renamed into
// the directory.
func TestASegmentBeingPlacedIsNotForgotten(t *testing.T) {
	dir := t.TempDir()
	s, err := NewDiskStore(dir, DiskOptions{MaxBytes: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	s.segCap = 1 // every record starts a segment
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			s.refresh()
		}
	}()
	var lost atomic.Int64
	var ww sync.WaitGroup
	for g := range 4 {
		ww.Add(1)
		go func() {
			defer ww.Done()
			for i := range 60 {
				k := fmt.Sprintf("k%d-%d", g, i)
				w, _ := s.Put(k, &Entry{Key: k, Status: 200, Size: 300 << 10})
				w.Write(make([]byte, 300<<10))
				if err := w.Commit(); err != nil {
					t.Error(err)
					return
				}
				s.mu.RLock()
				sl := s.index[hashKey(k)]
				seg := s.byID[sl.seg]
				s.mu.RUnlock()
				if seg == nil {
					lost.Add(1)
				}
			}
		}()
	}
	ww.Wait()
	stop.Store(true)
	wg.Wait()
	if lost.Load() > 0 {
		t.Errorf("%d records indexed into a segment refresh forgot while it was being placed", lost.Load())
	}
}

// countFDs is the number of files this process has open.
func countFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("needs /proc/self/fd")
	}
	return len(ents)
}

// countSegments is the number of segment files under dir.
func countSegments(dir string) int {
	ents, _ := os.ReadDir(filepath.Join(dir, "v3"))
	n := 0
	for _, e := range ents {
		if isSegmentName(e.Name()) {
			n++
		}
	}
	return n
}

// A full disk (here the file size limit, which fails a write the same way) fails each write, but
// the segment is cut back to its last whole record and kept: failing writes do not start a
// segment, and open a file, each.
func TestAFullDiskKeepsOneSegment(t *testing.T) {
	dir := t.TempDir()
	s := openAt(t, dir, 64<<20, 0)
	defer s.Close()
	StoreBody(t, s, "https://a.test/warm", "x")
	s.writeMu.Lock()
	s.seal() // the full disk is met by a new segment
	s.writeMu.Unlock()
	segsBefore, fdsBefore := countSegments(dir), countFDs(t)
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	lim := old
	lim.Cur = 100 // a record of a few hundred bytes is cut after 100, as on a full disk
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skip(err)
	}
	failed := 0
	for i := range 50 {
		key := fmt.Sprintf("https://a.test/%d", i)
		w, err := s.Put(key, &Entry{Status: 200, Header: map[string][]string{}, Size: 300})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(strings.Repeat("b", 300)))
		if w.Commit() != nil {
			failed++
		}
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if failed != 50 {
		t.Fatalf("%d of 50 writes failed: the limit did not act like a full disk", failed)
	}
	if segs, fds := countSegments(dir)-segsBefore, countFDs(t)-fdsBefore; segs > 1 || fds > 2 {
		t.Errorf("50 failed writes made %d segment files and opened %d files", segs, fds)
	}
	StoreBody(t, s, "https://a.test/after", "room again")
	if body, err := ReadBody(s, "https://a.test/after"); body != "room again" {
		t.Errorf("after the disk has room again: %q, %v", body, err)
	}
}

// A segment that cannot be renamed into place (here the temporary directory is on another file
// system) fails the write and leaves no file open.
func TestAFailedPlacementClosesItsFiles(t *testing.T) {
	other, err := os.MkdirTemp("/dev/shm", "etiquette-")
	if err != nil {
		t.Skip(err)
	}
	defer os.RemoveAll(other)
	dir := t.TempDir()
	s := openAt(t, dir, 64<<20, 0)
	defer s.Close()
	if err := os.RemoveAll(s.tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, s.tmp); err != nil {
		t.Fatal(err)
	}
	before := countFDs(t)
	for i := range 20 {
		key := fmt.Sprintf("https://a.test/%d", i)
		w, err := s.Put(key, &Entry{Status: 200, Header: map[string][]string{}, Size: 1})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("b"))
		if err := w.Commit(); !errors.Is(err, syscall.EXDEV) {
			t.Skipf("commit: %v; the temporary directory is not on another file system here", err)
		}
	}
	if leaked := countFDs(t) - before; leaked > 0 {
		t.Errorf("20 failed placements left %d files open", leaked)
	}
}

// A segment another process is still appending to, however long ago it was last written, is not
// evicted: that process's records (a deletion here) stay where every process reads them.
func TestEvictionLeavesASegmentBeingWritten(t *testing.T) {
	dir := t.TempDir()
	const limit = 64 << 10 // 4 KiB segments
	keeper := openAt(t, dir, limit, 0)
	StoreBody(t, keeper, "https://a.test/k", "old body")
	keeperSeg := activeName(keeper)
	defer keeper.Close()

	a := openAt(t, dir, limit, time.Minute) // a long-running, idle writer
	defer a.Close()
	StoreBody(t, a, "https://a.test/a0", "a")
	aSeg := activeName(a)
	setWritten(t, dir, aSeg, -2*time.Hour)
	setWritten(t, dir, keeperSeg, time.Hour)

	b := openAt(t, dir, limit, 2*time.Minute) // fills the directory and evicts
	defer b.Close()
	for i := range 40 {
		StoreBody(t, b, fmt.Sprintf("https://b.test/%d", i), strings.Repeat("x", 2000))
	}
	if _, err := os.Stat(filepath.Join(dir, "v3", aSeg)); err != nil {
		t.Fatalf("the segment a process writes was evicted: %v", err)
	}
	if err := a.Delete("https://a.test/k"); err != nil { // a deletes k, without a Get first
		t.Fatal(err)
	}
	c := openAt(t, dir, limit, 3*time.Minute)
	defer c.Close()
	if body, err := ReadBody(c, "https://a.test/k"); err == nil {
		t.Errorf("a deleted key is served by a new process: %q", body)
	}
}

// After Close, a Get is a miss and a write fails with ErrClosed; neither opens a file.
func TestUseAfterCloseOpensNothing(t *testing.T) {
	dir := t.TempDir()
	s := openAt(t, dir, 64<<20, 0)
	StoreBody(t, s, "https://a.test/1", "one")
	w, err := s.Put("https://a.test/late", &Entry{Status: 200, Header: map[string][]string{}, Size: 4})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	before, segsBefore := countFDs(t), countSegments(dir)
	if _, err := ReadBody(s, "https://a.test/1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Close: %v, want ErrNotFound", err)
	}
	if _, err := s.Put("https://a.test/2", &Entry{Status: 200, Header: map[string][]string{}}); !errors.Is(err, ErrClosed) {
		t.Errorf("Put after Close: %v, want ErrClosed", err)
	}
	w.Write([]byte("late"))
	if err := w.Commit(); !errors.Is(err, ErrClosed) {
		t.Errorf("Commit after Close: %v, want ErrClosed", err)
	}
	if n, segs := countFDs(t)-before, countSegments(dir)-segsBefore; n > 0 || segs > 0 {
		t.Errorf("after Close: %d more files open, %d more segment files", n, segs)
	}
}

// A body whose temporary file cannot take it all (a full disk, here the file size limit) is not
// stored: the Commit after the failed Write fails, and the key stays as it was.
func TestABodyCutShortInItsTemporaryFileIsNotStored(t *testing.T) {
	dir := t.TempDir()
	s := openAt(t, dir, 64<<20, 0)
	defer s.Close()
	StoreBody(t, s, "https://a.test/page", "before")
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	lim := old
	lim.Cur = 400 << 10
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skip(err)
	}
	w, err := s.Put("https://a.test/page", &Entry{Status: 200, Header: map[string][]string{}, Size: -1})
	if err != nil {
		t.Fatal(err)
	}
	chunk := []byte(strings.Repeat("b", 100<<10))
	var werr error
	for range 6 { // 600 KB: the temporary file is cut at 400
		if _, werr = w.Write(chunk); werr != nil {
			break
		}
	}
	cerr := w.Commit()
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if werr == nil {
		t.Fatal("no Write failed: the limit did not act like a full disk")
	}
	if cerr == nil {
		t.Error("Commit after a failed Write succeeded")
	}
	if body, err := ReadBody(s, "https://a.test/page"); body != "before" {
		t.Errorf("the key holds %d bytes (%v), want the record from before", len(body), err)
	}
}
