package cache

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRecord feeds arbitrary bytes to the record decoder the disk store and the httpcache adapter
// use: it must reject or accept, never panic, and an accepted record must be self-consistent.
func FuzzRecord(f *testing.F) {
	good, _ := encodeRecord("k", &Entry{Status: 200, Header: http.Header{"A": {"b"}}}, []byte("body"), 1)
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(deletionRecord("k", 2))
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0xff}, headLen))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, body, err := decodeRecord(b, "k")
		if err != nil {
			return
		}
		if e.Key != "k" || e.Size != int64(len(body)) {
			t.Fatalf("accepted an inconsistent record: key %q size %d body %d", e.Key, e.Size, len(body))
		}
	})
}

// FuzzSegment opens a disk store whose directory holds one segment file of arbitrary bytes: the
// store must open, and serve only whole records of the key asked for, never panic.
func FuzzSegment(f *testing.F) {
	a, _ := encodeRecord("a", &Entry{Status: 200, Header: http.Header{}}, []byte("first"), 1)
	b, _ := encodeRecord("b", &Entry{Status: 200, Header: http.Header{}}, bytes.Repeat([]byte("x"), 300<<10), 2)
	f.Add(append(append([]byte{}, a...), b...))
	f.Add(append(append([]byte{}, a...), deletionRecord("a", 3)...))
	f.Add(a[:len(a)/2])
	f.Add([]byte("seg"))
	f.Fuzz(func(t *testing.T, seg []byte) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, layout), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, layout, "seg-0000000000000001-00.log"), seg, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := NewDiskStore(dir, DiskOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"a", "b"} {
			e, body, err := s.Get(key)
			if err != nil {
				continue
			}
			var got bytes.Buffer
			_, rerr := got.ReadFrom(body)
			body.Close()
			if rerr != nil || e.Key != key || int64(got.Len()) != e.Size {
				t.Fatalf("Get(%q) served an inconsistent record: key %q size %d body %d (%v)", key, e.Key, e.Size, got.Len(), rerr)
			}
		}
	})
}
