package cache_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/cache"
)

// segments lists the segment files under a disk store's directory (temporary files excluded).
func segments(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), "seg-") {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fi.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rewriteTheSegment replaces the one segment file under dir with what change makes of its bytes.
func rewriteTheSegment(t *testing.T, dir string, change func([]byte) []byte) {
	t.Helper()
	recs := segments(t, dir)
	if len(recs) != 1 {
		t.Fatalf("%d segments written, want 1", len(recs))
	}
	for p := range recs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, change(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func newDisk(t *testing.T, dir string, max int64) *cache.DiskStore {
	t.Helper()
	s, err := cache.NewDiskStore(dir, cache.DiskOptions{MaxBytes: max})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDiskCorruptEntryIsAMissAndReplaced damages a stored record in the ways a crash, a full disk
// or a stray editor can, and checks that the damaged copy is never served and is replaced. The
// record is the only one in its segment file, so the file's bytes are the record's.
func TestDiskCorruptEntryIsAMissAndReplaced(t *testing.T) {
	const small = "the stored payload, long enough to cut in half and still have a trailer after it"
	// A small record is read whole and checked in memory; a large one is checked in one pass over
	// the file and then streamed from it.
	for _, body := range []string{small, strings.Repeat(small, 4000)} {
		t.Run(fmt.Sprintf("%d bytes", len(body)), func(t *testing.T) { testDiskCorruption(t, body) })
	}
}

func testDiskCorruption(t *testing.T, body string) {
	for _, tc := range []struct {
		name   string
		damage func(b []byte) []byte
	}{
		{"truncated to half", func(b []byte) []byte { return b[:len(b)/2] }},
		{"last byte missing", func(b []byte) []byte { return b[:len(b)-1] }},
		{"empty file", func(b []byte) []byte { return nil }},
		{"shifted by a byte", func(b []byte) []byte { return append([]byte{'x'}, b...) }},
		{"body byte flipped", func(b []byte) []byte { b[len(b)-3] ^= 0x01; return b }},
		{"metadata byte flipped", func(b []byte) []byte { b[len(b)-len(body)-10] ^= 0x01; return b }},
		{"key byte flipped", func(b []byte) []byte { b[45] ^= 0x01; return b }},
		{"head length changed", func(b []byte) []byte { b[20] ^= 0x01; return b }},
		{"garbage", func(b []byte) []byte { return bytes.Repeat([]byte{0xAB}, len(b)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			srv := newOrigin(t, c, func(w http.ResponseWriter, r *http.Request) string {
				w.Header().Set("Cache-Control", "max-age=600")
				return body
			})
			dir := t.TempDir()
			tr := cache.New(http.DefaultTransport, newDisk(t, dir, 0), cache.Options{Now: c.Now})
			get(t, tr, srv.URL)
			rewriteTheSegment(t, dir, tc.damage)
			if r := get(t, tr, srv.URL); r.status != cache.Miss || r.body != body {
				t.Fatalf("read of the damaged record = %q %q, want a miss with the origin's body", r.status, r.body)
			}
			if r := get(t, tr, srv.URL); r.status != cache.Fresh || r.body != body {
				t.Errorf("read after the replacement = %q %q, want fresh", r.status, r.body)
			}
			if n := len(srv.requests()); n != 2 {
				t.Errorf("origin saw %d requests, want 2", n)
			}
			if n := tr.Stats().Corrupt; n != 1 {
				t.Errorf("Stats().Corrupt = %d, want 1", n)
			}
		})
	}
}

func TestDiskRecordOfAnotherKeyIsNotServed(t *testing.T) {
	dir := t.TempDir()
	s := newDisk(t, dir, 0)
	cache.StoreBody(t, s, "GET http://a.example/", "a")
	cache.StoreBody(t, s, "GET http://b.example/", "b")
	// Both records are in one segment, a's then b's, of the same length: put a's where b's was.
	rewriteTheSegment(t, dir, func(b []byte) []byte { copy(b[len(b)/2:], b[:len(b)/2]); return b })
	if _, _, err := s.Get("GET http://b.example/"); !errors.Is(err, cache.ErrCorrupt) {
		t.Errorf("Get of a record moved from another key: %v, want ErrCorrupt", err)
	}
}

func TestDiskSizeLimit(t *testing.T) {
	dir := t.TempDir()
	const limit = 100 << 10
	s := newDisk(t, dir, limit)
	body := bytes.Repeat([]byte("z"), 10<<10)
	for i := range 50 {
		w, err := s.Put(fmt.Sprintf("k%d", i), &cache.Entry{Status: 200, Header: http.Header{}})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(body)
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	var total int64
	for _, n := range segments(t, dir) {
		total += n
	}
	if total > limit {
		t.Errorf("directory holds %d bytes, limit %d", total, limit)
	}
	if _, rc, err := s.Get("k49"); err != nil {
		t.Errorf("the newest entry was evicted: %v", err)
	} else {
		rc.Close()
	}
	if _, _, err := s.Get("k0"); !errors.Is(err, cache.ErrNotFound) {
		t.Errorf("the oldest entry survived a full directory: %v", err)
	}
}

// helperDirEnv names the directory a child process of TestDiskSharedByTwoProcesses works in.
const helperDirEnv = "ETIQUETTE_CACHE_HELPER_DIR"

// TestDiskSharedByTwoProcesses runs this test binary a second time as a child process; parent and
// child write and read the same keys in one directory at once. Every read must return a whole,
// consistent record (its body matches the checksum its writer put in its header) or a miss.
func TestDiskSharedByTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a second process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDiskHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperDirEnv+"="+dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	parentErr := hammer(dir, 1)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the child process failed: %v\n%s", err, out.String())
	}
	if parentErr != nil {
		t.Fatal(parentErr)
	}
}

// TestDiskHelperProcess is the child of TestDiskSharedByTwoProcesses; run alone it does nothing.
func TestDiskHelperProcess(t *testing.T) {
	dir := os.Getenv(helperDirEnv)
	if dir == "" {
		t.Skip("only runs as the child of TestDiskSharedByTwoProcesses")
	}
	if err := hammer(dir, 2); err != nil {
		t.Fatal(err)
	}
}

// hammer writes, deletes and reads 8 shared keys for a second with bodies of varied size, in a
// directory small enough that segments are evicted all along.
func hammer(dir string, writer int) error {
	s, err := cache.NewDiskStore(dir, cache.DiskOptions{MaxBytes: 4 << 20})
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(uint64(writer), uint64(time.Now().UnixNano())))
	reads := 0
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
		key := "GET http://shared.example/" + strconv.Itoa(rng.IntN(8))
		body := bytes.Repeat([]byte{byte('a' + writer)}, 1+rng.IntN(256<<10))
		body[0] = byte(rng.IntN(256))
		sum := sha256.Sum256(body)
		w, err := s.Put(key, &cache.Entry{Status: 200, Header: http.Header{"X-Sum": {hex.EncodeToString(sum[:])}}})
		if err != nil {
			return err
		}
		w.Write(body)
		if err := w.Commit(); err != nil {
			return fmt.Errorf("writer %d: commit: %w", writer, err)
		}
		if rng.IntN(10) == 0 {
			if err := s.Delete("GET http://shared.example/" + strconv.Itoa(rng.IntN(8))); err != nil {
				return fmt.Errorf("writer %d: delete: %w", writer, err)
			}
		}
		e, rc, err := s.Get("GET http://shared.example/" + strconv.Itoa(rng.IntN(8)))
		if errors.Is(err, cache.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("writer %d: read failed: %w", writer, err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return fmt.Errorf("writer %d: reading a body: %w", writer, err)
		}
		gs := sha256.Sum256(got)
		if hex.EncodeToString(gs[:]) != e.Header.Get("X-Sum") || int64(len(got)) != e.Size {
			return fmt.Errorf("writer %d: a read mixed two records (%d bytes, size %d)", writer, len(got), e.Size)
		}
		reads++
	}
	if reads == 0 {
		return fmt.Errorf("writer %d: no successful read", writer)
	}
	return nil
}

// TestDiskRemovesAnOlderLayout: records of an earlier directory layout can never be found again,
// so opening the store removes them instead of leaving their space taken for good.
func TestDiskRemovesAnOlderLayout(t *testing.T) {
	dir := t.TempDir()
	for _, old := range []string{filepath.Join(dir, "v1", "ab", "cd"), filepath.Join(dir, "v2", "ab")} {
		if err := os.MkdirAll(old, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(old, "abcd0123"), bytes.Repeat([]byte("x"), 4096), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := newDisk(t, dir, 0)
	for _, old := range []string{"v1", "v2"} {
		if _, err := os.Stat(filepath.Join(dir, old)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the older layout %s is still there (%v)", old, err)
		}
	}
	w, err := s.Put("k", &cache.Entry{Status: 200, Header: http.Header{}})
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, "body")
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, body, err := s.Get("k"); err != nil {
		t.Errorf("the store does not work after removing the older layout: %v", err)
	} else {
		body.Close()
	}
}

// TestDiskAnotherProcessSeesRecordsWithinARefresh: two stores on one directory (as two processes
// would have) see each other's records, deletions and replacements once a refresh interval has
// passed, and the later written record of a key wins in both.
func TestDiskAnotherProcessSeesRecordsWithinARefresh(t *testing.T) {
	dir := t.TempDir()
	c := newClock()
	one, two := newDisk(t, dir, 0), newDisk(t, dir, 0)
	cache.SetDiskClock(one, c.Now)
	cache.SetDiskClock(two, c.Now)
	if _, err := cache.ReadBody(two, "k"); !errors.Is(err, cache.ErrNotFound) {
		t.Fatalf("empty store: %v", err)
	}
	cache.StoreBody(t, one, "k", "from one")
	if got, err := cache.ReadBody(one, "k"); got != "from one" {
		t.Fatalf("the writer reads %q, %v", got, err)
	}
	if _, err := cache.ReadBody(two, "k"); !errors.Is(err, cache.ErrNotFound) {
		t.Errorf("the other store saw the record before its refresh: %v", err)
	}
	c.Advance(cache.RefreshEvery)
	if got, err := cache.ReadBody(two, "k"); got != "from one" {
		t.Fatalf("after a refresh interval the other store reads %q, %v", got, err)
	}

	c.Advance(time.Millisecond)
	cache.StoreBody(t, two, "k", "from two")
	c.Advance(cache.RefreshEvery)
	for name, s := range map[string]*cache.DiskStore{"one": one, "two": two} {
		if got, err := cache.ReadBody(s, "k"); got != "from two" {
			t.Errorf("store %s reads %q, %v; want the later record", name, got, err)
		}
	}

	c.Advance(time.Millisecond)
	if err := one.Delete("k"); err != nil {
		t.Fatal(err)
	}
	c.Advance(cache.RefreshEvery)
	for name, s := range map[string]*cache.DiskStore{"one": one, "two": two} {
		if _, err := cache.ReadBody(s, "k"); !errors.Is(err, cache.ErrNotFound) {
			t.Errorf("store %s after the deletion: %v, want ErrNotFound", name, err)
		}
	}
}

// TestDiskReopenFindsTheNewestRecords: a store opened on a directory written before serves the
// last record of each key and nothing deleted.
func TestDiskReopenFindsTheNewestRecords(t *testing.T) {
	dir := t.TempDir()
	s := newDisk(t, dir, 0)
	cache.StoreBody(t, s, "k", "old")
	cache.StoreBody(t, s, "k", "new")
	cache.StoreBody(t, s, "gone", "deleted")
	if err := s.Delete("gone"); err != nil {
		t.Fatal(err)
	}
	cache.StoreBody(t, s, "large", strings.Repeat("L", 1<<20))

	again := newDisk(t, dir, 0)
	if got, err := cache.ReadBody(again, "k"); got != "new" {
		t.Errorf("k = %q, %v; want the newer record", got, err)
	}
	if _, err := cache.ReadBody(again, "gone"); !errors.Is(err, cache.ErrNotFound) {
		t.Errorf("a deleted key: %v, want ErrNotFound", err)
	}
	if got, err := cache.ReadBody(again, "large"); len(got) != 1<<20 || err != nil {
		t.Errorf("the large body: %d bytes, %v", len(got), err)
	}
}

// TestDiskRecordCutShortByACrash: a writer that dies mid-record leaves the segment's earlier
// records readable, and the store goes on writing.
func TestDiskRecordCutShortByACrash(t *testing.T) {
	dir := t.TempDir()
	s := newDisk(t, dir, 0)
	cache.StoreBody(t, s, "kept", "whole")
	cache.StoreBody(t, s, "cut", strings.Repeat("c", 4096))
	for p, size := range segments(t, dir) {
		if err := os.Truncate(p, size-100); err != nil {
			t.Fatal(err)
		}
	}
	again := newDisk(t, dir, 0)
	if got, err := cache.ReadBody(again, "kept"); got != "whole" {
		t.Errorf("the record before the cut: %q, %v", got, err)
	}
	if _, err := cache.ReadBody(again, "cut"); !errors.Is(err, cache.ErrNotFound) {
		t.Errorf("the record cut short: %v, want ErrNotFound", err)
	}
	cache.StoreBody(t, again, "cut", "stored again")
	if got, err := cache.ReadBody(newDisk(t, dir, 0), "cut"); got != "stored again" {
		t.Errorf("after storing it again: %q, %v", got, err)
	}
}

// TestDiskLargeBodyGoesThroughATemporaryFile: a body too large to collect in memory is written to
// a temporary file, then copied to the end of the process's segment, or, when it would fill more
// than a quarter of a segment, made a segment of its own; nothing is left in the temporary
// directory.
func TestDiskLargeBodyGoesThroughATemporaryFile(t *testing.T) {
	large := strings.Repeat("0123456789", 100<<10) // 1 MB
	for _, tc := range []struct {
		name     string
		max      int64
		segments int
	}{
		{"copied into the segment", 0, 1},     // 64 MiB segments
		{"a segment of its own", 16 << 20, 2}, // 1 MiB segments
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := newDisk(t, dir, tc.max)
			cache.StoreBody(t, s, "small", "first")
			cache.StoreBody(t, s, "large", large)
			cache.StoreBody(t, s, "after", "last")
			for key, want := range map[string]string{"small": "first", "large": large, "after": "last"} {
				if got, err := cache.ReadBody(s, key); got != want {
					t.Errorf("%s: read back %d bytes, %v; want %d", key, len(got), err, len(want))
				}
			}
			if n := len(segments(t, dir)); n != tc.segments {
				t.Errorf("%d segment files, want %d", n, tc.segments)
			}
			if got, err := cache.ReadBody(newDisk(t, dir, tc.max), "large"); got != large {
				t.Errorf("reopened: %d bytes, %v", len(got), err)
			}
			w, err := s.Put("aborted", &cache.Entry{Status: 200, Header: http.Header{}, Size: -1})
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(w, large)
			w.Abort()
			if left, err := os.ReadDir(filepath.Join(dir, "v3", "tmp")); err != nil || len(left) != 0 {
				t.Errorf("temporary directory holds %d files (%v), want none", len(left), err)
			}
		})
	}
}

// TestDiskBodyLargerThanAnEighthOfTheLimit is not kept, whether its length is announced or found
// while it is written, and what the key held before is dropped.
func TestDiskBodyLargerThanAnEighthOfTheLimit(t *testing.T) {
	s := newDisk(t, t.TempDir(), 80<<10)
	cache.StoreBody(t, s, "k", "small")
	if _, err := s.Put("k", &cache.Entry{Status: 200, Header: http.Header{}, Size: 20 << 10}); !errors.Is(err, cache.ErrTooLarge) {
		t.Errorf("Put of an announced 20 KB body: %v, want ErrTooLarge", err)
	}
	if _, err := cache.ReadBody(s, "k"); !errors.Is(err, cache.ErrNotFound) {
		t.Errorf("the earlier record survived: %v", err)
	}
	cache.StoreBody(t, s, "k", "small")
	w, err := s.Put("k", &cache.Entry{Status: 200, Header: http.Header{}, Size: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(w, strings.Repeat("x", 20<<10)); !errors.Is(err, cache.ErrTooLarge) {
		t.Errorf("Write past the limit: %v, want ErrTooLarge", err)
	}
	if err := w.Commit(); !errors.Is(err, cache.ErrTooLarge) {
		t.Errorf("Commit: %v, want ErrTooLarge", err)
	}
	if _, err := cache.ReadBody(s, "k"); !errors.Is(err, cache.ErrNotFound) {
		t.Errorf("the earlier record survived: %v", err)
	}
}

// TestDiskSegmentRemovedByAnotherProcess: when one store evicts a segment the other wrote (and
// no longer writes), the other stops serving its records at its next refresh, and both go on
// storing.
func TestDiskSegmentRemovedByAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	c := newClock()
	one, two := newDisk(t, dir, 100<<10), newDisk(t, dir, 100<<10)
	cache.SetDiskClock(one, c.Now)
	cache.SetDiskClock(two, c.Now)
	cache.StoreBody(t, two, "first", strings.Repeat("f", 10<<10))
	cache.StoreBody(t, two, "second", strings.Repeat("s", 10<<10)) // 6.4 KB segments: "first"'s is sealed
	c.Advance(cache.RefreshEvery)
	if _, err := cache.ReadBody(one, "first"); err != nil {
		t.Fatalf("one does not see two's record: %v", err)
	}
	for i := range 20 {
		c.Advance(time.Millisecond)
		cache.StoreBody(t, one, fmt.Sprintf("k%d", i), strings.Repeat("z", 10<<10))
	}
	c.Advance(cache.RefreshEvery)
	if _, err := cache.ReadBody(two, "first"); !errors.Is(err, cache.ErrNotFound) {
		t.Errorf("two still serves a record whose segment one removed: %v", err)
	}
	cache.StoreBody(t, two, "again", "stored after its segment was removed")
	c.Advance(cache.RefreshEvery)
	if got, err := cache.ReadBody(one, "again"); got != "stored after its segment was removed" {
		t.Errorf("one reads %q, %v", got, err)
	}
}

// segmentFiles lists the names of the segment files under dir.
func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	for p := range segments(t, dir) {
		names = append(names, filepath.Base(p))
	}
	return names
}

// TestDiskDeletionOutlivesTheSegmentItIsIn: a deletion whose segment is evicted while an older
// record of its key survives in another segment is written again, so the key stays deleted for
// every process that opens the directory later.
func TestDiskDeletionOutlivesTheSegmentItIsIn(t *testing.T) {
	dir := t.TempDir()
	const limit = 256 << 10 // 16 KiB segments
	c := newClock()
	a := newDisk(t, dir, limit)
	cache.SetDiskClock(a, c.Now)
	cache.StoreBody(t, a, "K", "old response")
	older := segmentFiles(t, dir)

	b := newDisk(t, dir, limit) // a still writes its segment, so b starts its own
	if err := b.Delete("K"); err != nil {
		t.Fatal(err)
	}
	b.Close()
	for _, name := range segmentFiles(t, dir) {
		when := time.Now().Add(-2 * time.Hour) // the deletion's segment is the least recently written
		if slices.Contains(older, name) {
			when = time.Now().Add(time.Hour) // the old record's, the most
		}
		if err := os.Chtimes(filepath.Join(dir, "v3", name), when, when); err != nil {
			t.Fatal(err)
		}
	}
	c.Advance(cache.RefreshEvery)
	if _, err := cache.ReadBody(a, "K"); !errors.Is(err, cache.ErrNotFound) {
		t.Fatalf("before eviction: %v, want ErrNotFound", err)
	}
	for i := range 10 { // 300 KB: past the limit, so segments are evicted
		cache.StoreBody(t, a, fmt.Sprintf("filler %d", i), strings.Repeat("f", 30<<10))
	}
	if slices.Contains(segmentFiles(t, dir), older[0]) == false {
		t.Fatal("the old record's segment was evicted: the test proves nothing")
	}
	if _, err := cache.ReadBody(newDisk(t, dir, limit), "K"); !errors.Is(err, cache.ErrNotFound) {
		t.Errorf("a store opened after the eviction: %v, want ErrNotFound (the deleted record came back)", err)
	}
}

// TestDiskResumedSegmentIsReadByItsWriter: a segment this process wrote and no longer appends to
// (here a large body's own segment) may be resumed by another process; this process reads what
// that one appends there.
func TestDiskResumedSegmentIsReadByItsWriter(t *testing.T) {
	dir := t.TempDir()
	const limit = 16 << 20 // 1 MiB segments: a 300 KB body gets a segment of its own
	c := newClock()
	a := newDisk(t, dir, limit)
	cache.SetDiskClock(a, c.Now)
	cache.StoreBody(t, a, "big", strings.Repeat("z", 300<<10))
	b := newDisk(t, dir, limit)
	cache.StoreBody(t, b, "k", "from b")
	if err := b.Delete("big"); err != nil {
		t.Fatal(err)
	}
	if n := len(segmentFiles(t, dir)); n != 1 {
		t.Fatalf("%d segment files: b did not resume a's (the test proves nothing)", n)
	}
	c.Advance(cache.RefreshEvery)
	if got, err := cache.ReadBody(a, "k"); got != "from b" {
		t.Errorf("a reads %q, %v; want b's record", got, err)
	}
	if _, err := cache.ReadBody(a, "big"); !errors.Is(err, cache.ErrNotFound) {
		t.Errorf("a still serves a key b deleted: %v", err)
	}
}

// TestDiskSegmentCutShortIsNotResumed: a segment whose last record a dying writer left cut short
// is not written to again (its remains, read after a new record, could pass for records); the
// next process starts its own, and every record stays readable.
func TestDiskSegmentCutShortIsNotResumed(t *testing.T) {
	dir := t.TempDir()
	a := newDisk(t, dir, 0)
	cache.StoreBody(t, a, "k1", "whole")
	cache.StoreBody(t, a, "k2", strings.Repeat("c", 4096))
	a.Close()
	for p, size := range segments(t, dir) {
		if err := os.Truncate(p, size-100); err != nil {
			t.Fatal(err)
		}
	}
	b := newDisk(t, dir, 0)
	cache.StoreBody(t, b, "k3", "after the crash")
	if n := len(segmentFiles(t, dir)); n != 2 {
		t.Errorf("%d segment files, want 2: the cut segment was resumed", n)
	}
	c := newDisk(t, dir, 0)
	for key, want := range map[string]string{"k1": "whole", "k3": "after the crash"} {
		if got, err := cache.ReadBody(c, key); got != want {
			t.Errorf("%s: %q, %v", key, got, err)
		}
	}
}

// TestDiskClosesEverySegmentItOpened: segments created while a refresh runs alongside are opened
// once, and Close leaves no file of the directory open.
func TestDiskClosesEverySegmentItOpened(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("needs /proc/self/fd")
	}
	dir := t.TempDir()
	s := newDisk(t, dir, 16<<20) // 1 MiB segments: 300 KB bodies get their own
	var ticks atomic.Int64
	base := time.Now()
	cache.SetDiskClock(s, func() time.Time { // every Get refreshes
		return base.Add(time.Duration(ticks.Add(1)) * cache.RefreshEvery)
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 2000 {
			cache.ReadBody(s, "big 0")
		}
	}()
	for i := range 60 {
		cache.StoreBody(t, s, fmt.Sprintf("big %d", i), strings.Repeat("x", 300<<10))
		cache.StoreBody(t, s, fmt.Sprintf("small %d", i), strings.Repeat("y", 100<<10))
	}
	<-done
	s.Close()
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, dir) {
			t.Errorf("still open after Close: %s", target)
		}
	}
}

// TestDiskLaterWriteWinsOverAClockAhead: a record written after another process's record of the
// same key wins, even when that process's clock runs an hour ahead.
func TestDiskLaterWriteWinsOverAClockAhead(t *testing.T) {
	dir := t.TempDir()
	ahead, behind := newClock(), newClock()
	ahead.Advance(time.Hour)
	a, b := newDisk(t, dir, 0), newDisk(t, dir, 0)
	cache.SetDiskClock(a, ahead.Now)
	cache.SetDiskClock(b, behind.Now)
	cache.StoreBody(t, a, "k", "first, from the clock ahead")
	behind.Advance(cache.RefreshEvery)
	if got, err := cache.ReadBody(b, "k"); got != "first, from the clock ahead" {
		t.Fatalf("b reads %q, %v", got, err)
	}
	cache.StoreBody(t, b, "k", "second")
	ahead.Advance(cache.RefreshEvery)
	for name, s := range map[string]*cache.DiskStore{"a": a, "b": b} {
		if got, err := cache.ReadBody(s, "k"); got != "second" {
			t.Errorf("%s reads %q, %v; want the record written last", name, got, err)
		}
	}
}

// directoryBytes is the size of the segment files under dir.
func directoryBytes(t *testing.T, dir string) int64 {
	var n int64
	for _, size := range segments(t, dir) {
		n += size
	}
	return n
}

// TestDiskTwoWritersKeepTheLimitTogether: two processes that only write (no Get) count each
// other's bytes, so the directory stays near its limit instead of each filling it.
func TestDiskTwoWritersKeepTheLimitTogether(t *testing.T) {
	dir := t.TempDir()
	const limit = 1 << 20
	var ticks atomic.Int64
	base := time.Now()
	ticking := func() time.Time { return base.Add(time.Duration(ticks.Add(1)) * cache.RefreshEvery) }
	a, b := newDisk(t, dir, limit), newDisk(t, dir, limit)
	cache.SetDiskClock(a, ticking)
	cache.SetDiskClock(b, ticking)
	var peak int64
	for i := range 200 { // 4 MB in all
		s := a
		if i%2 == 1 {
			s = b
		}
		cache.StoreBody(t, s, fmt.Sprintf("k%d", i), strings.Repeat("z", 20<<10))
		peak = max(peak, directoryBytes(t, dir))
	}
	if peak > limit*11/10 {
		t.Errorf("the directory reached %d bytes, limit %d", peak, limit)
	}
}
