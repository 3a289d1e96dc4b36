package cache

import (
	"io"
	"net/http"
	"testing"
	"time"
)

// MemoryEntries is the number of entries m holds, Vary indexes included: the tests' view of what
// reached the store.
func MemoryEntries(m *MemoryStore) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.items)
}

// SetDiskClock makes s read the time from now: record times and when it next looks for other
// processes' records.
func SetDiskClock(s *DiskStore, now func() time.Time) {
	s.now = now
	s.nextScan.Store(0)
}

// FromHTTPCache adapts a gregjones/httpcache backend to a Store (see fromHTTPCache).
var FromHTTPCache = fromHTTPCache

// RefreshEvery is how long a disk store goes without looking for other processes' records.
const RefreshEvery = refreshEvery

// StoreBody stores body under key in s as a 200 response, failing t on any error.
func StoreBody(t testing.TB, s Store, key, body string) {
	t.Helper()
	w, err := s.Put(key, &Entry{Status: 200, Header: http.Header{}, Size: int64(len(body))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(w, body); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

// ReadBody returns the body stored under key in s, or "" and the error.
func ReadBody(s Store, key string) (string, error) {
	_, rc, err := s.Get(key)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return string(b), err
}
