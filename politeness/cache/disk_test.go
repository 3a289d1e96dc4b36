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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/cache"
)

// records lists the record files under a disk store's directory (temporary files excluded).
func records(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".tmp-") {
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

func newDisk(t *testing.T, dir string, max int64) *cache.DiskStore {
	t.Helper()
	s, err := cache.NewDiskStore(dir, cache.DiskOptions{MaxBytes: max})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDiskCorruptEntryIsAMissAndReplaced damages a stored record in the ways a crash, a full disk
// or a stray editor can, and checks that the damaged copy is never served and is replaced.
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
		{"byte appended", func(b []byte) []byte { return append(b, 'x') }},
		{"body byte flipped", func(b []byte) []byte { b[3] ^= 0x01; return b }},
		{"metadata byte flipped", func(b []byte) []byte { b[len(body)+10] ^= 0x01; return b }},
		{"trailer length changed", func(b []byte) []byte { b[len(b)-20] ^= 0x01; return b }},
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
			recs := records(t, dir)
			if len(recs) != 1 {
				t.Fatalf("%d records stored, want 1", len(recs))
			}
			for p := range recs {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, tc.damage(b), 0o644); err != nil {
					t.Fatal(err)
				}
			}
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
	put := func(key, body string) {
		w, err := s.Put(key, &cache.Entry{Status: 200, Header: http.Header{}})
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, body)
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	put("GET http://a.example/", "a")
	before := records(t, dir)
	put("GET http://b.example/", "b")
	var pathA, pathB string
	for p := range records(t, dir) {
		if _, ok := before[p]; ok {
			pathA = p
		} else {
			pathB = p
		}
	}
	b, _ := os.ReadFile(pathA)
	if err := os.WriteFile(pathB, b, 0o644); err != nil {
		t.Fatal(err)
	}
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
	for _, n := range records(t, dir) {
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

// hammer writes and reads 8 shared keys for a second with bodies of varied size.
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
	old := filepath.Join(dir, "v1", "ab", "cd")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, "abcd0123"), bytes.Repeat([]byte("x"), 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newDisk(t, dir, 0)
	if _, err := os.Stat(filepath.Join(dir, "v1")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the older layout is still there (%v)", err)
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
