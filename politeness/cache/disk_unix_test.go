//go:build unix

package cache_test

// Disk store behaviour that rests on file locks (flock), which unix systems have.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/cache"
)

// TestDiskShortRunsShareASegment: processes that run one after another go on with the segment
// the last one left (a directory written by a job every few minutes does not gather a file per
// run), while a store still open keeps its segment to itself.
func TestDiskShortRunsShareASegment(t *testing.T) {
	dir := t.TempDir()
	for i := range 30 {
		s := newDisk(t, dir, 0)
		cache.StoreBody(t, s, fmt.Sprintf("run %d", i), fmt.Sprintf("page of run %d", i))
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(segments(t, dir)); n != 1 {
		t.Errorf("30 runs left %d segment files, want 1", n)
	}
	open := newDisk(t, dir, 0)
	cache.StoreBody(t, open, "open", "still writing")
	other := newDisk(t, dir, 0)
	cache.StoreBody(t, other, "other", "written alongside")
	if n := len(segments(t, dir)); n != 2 {
		t.Errorf("two stores open at once wrote %d segment files, want 2", n)
	}
	last := newDisk(t, dir, 0)
	for i := range 30 {
		if got, err := cache.ReadBody(last, fmt.Sprintf("run %d", i)); got != fmt.Sprintf("page of run %d", i) {
			t.Errorf("run %d: %q, %v", i, got, err)
		}
	}
	for key, want := range map[string]string{"open": "still writing", "other": "written alongside"} {
		if got, err := cache.ReadBody(last, key); got != want {
			t.Errorf("%s: %q, %v", key, got, err)
		}
	}
}

// TestDiskRemovesTheTemporaryFilesOfADeadProcess: a temporary file no process holds (its writer
// died while collecting a large body) is removed when a store opens, once it is a minute old,
// not an hour; one a live writer holds stays.
func TestDiskRemovesTheTemporaryFilesOfADeadProcess(t *testing.T) {
	dir := t.TempDir()
	newDisk(t, dir, 0)
	tmp := filepath.Join(dir, "v3", "tmp")
	orphan, held := filepath.Join(tmp, ".tmp-orphan"), filepath.Join(tmp, ".tmp-held")
	for _, p := range []string{orphan, held} {
		if err := os.WriteFile(p, bytes.Repeat([]byte("x"), 300<<10), 0o600); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-5 * time.Minute)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Skip("no flock here")
	}
	newDisk(t, dir, 0)
	if _, err := os.Stat(orphan); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a dead writer's temporary file is still there (%v)", err)
	}
	if _, err := os.Stat(held); err != nil {
		t.Errorf("a live writer's temporary file was removed: %v", err)
	}
}
