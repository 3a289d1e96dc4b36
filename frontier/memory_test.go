package frontier

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMemoryKeepsEveryEntryInOrder(t *testing.T) {
	tests := []struct {
		name    string
		entries []Entry
	}{
		{"one", []Entry{{URL: "https://a.example/", Depth: 1, Via: ViaStart}}},
		{"two schemes and userinfo share the origin's queue", []Entry{
			{URL: "https://a.example/x", Depth: 1, Via: ViaStart},
			{URL: "http://a.example/x", Depth: 2, Via: ViaLink},
			{URL: "https://user:p%40ss@a.example/y?q=1", Depth: 3, Via: ViaSitemap},
		}},
		{"depths beyond one byte, an empty Via", []Entry{
			{URL: "https://a.example/deep", Depth: 1 << 40},
			{URL: "https://a.example/zero", Depth: 0, Via: ""},
		}},
		{"last modification times to the second, before 1970 too", []Entry{
			{URL: "https://a.example/new", Depth: 1, Via: ViaSitemap, LastMod: time.Date(2026, 3, 1, 10, 0, 5, 0, time.UTC)},
			{URL: "https://a.example/old", Depth: 1, Via: ViaFeed, LastMod: time.Date(1969, 7, 20, 20, 17, 40, 0, time.UTC)},
			{URL: "https://a.example/epoch", Depth: 1, Via: ViaWPRest, LastMod: time.Unix(0, 0).UTC()},
			{URL: "https://a.example/none", Depth: 1, Via: ViaLLMs},
		}},
		{"records across many chunks", manyEntries(20_000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMemory()
			for _, e := range tt.entries {
				if a, err := m.AddRequest("a.example", e, 0); err != nil || a != Queued {
					t.Fatalf("AddRequest(%+v) = %v, %v", e, a, err)
				}
			}
			if n, _ := m.QueueSize("a.example"); n != len(tt.entries) {
				t.Fatalf("QueueSize = %d; want %d", n, len(tt.entries))
			}
			for i, want := range tt.entries {
				got, ok, err := m.GetRequest("a.example")
				if err != nil || !ok || got != want {
					t.Fatalf("GetRequest #%d = %+v, %v, %v; want %+v", i, got, ok, err, want)
				}
				m.Ack("a.example", got)
			}
			if _, ok, _ := m.GetRequest("a.example"); ok {
				t.Fatal("GetRequest after the last entry returned one")
			}
			if q := m.queues["a.example"]; q != nil {
				t.Fatalf("an emptied, acknowledged queue is kept: %d chunks, %d taken entries", len(q.bytes.chunks), q.taken)
			}
		})
	}
}

func manyEntries(n int) []Entry {
	out := make([]Entry, n)
	for i := range out {
		out[i] = Entry{URL: fmt.Sprintf("https://a.example/%s/%d", strings.Repeat("p", i%300), i), Depth: i % 9, Via: ViaLink}
	}
	return out
}

func TestMemoryDeduplicatesAcrossOriginsAndTime(t *testing.T) {
	m := NewMemory()
	e := Entry{URL: "https://a.example/x", Depth: 1}
	m.AddRequest("a.example", e, 0)
	got, _, _ := m.GetRequest("a.example")
	m.Ack("a.example", got)
	// Fetched and acknowledged: offering it again, under any key, is still a duplicate.
	for _, key := range []string{"a.example", "b.example"} {
		if a, err := m.AddRequest(key, e, 0); err != nil || a != Duplicate {
			t.Fatalf("AddRequest again under %s = %v, %v; want duplicate", key, a, err)
		}
	}
	if keys, _ := m.Origins(); len(keys) != 0 {
		t.Fatalf("Origins = %v; want none with waiting entries", keys)
	}
}

func TestMemoryRefusesBadEntries(t *testing.T) {
	m := NewMemory()
	if _, err := m.AddRequest("a.example", Entry{URL: "https://a.example/", Depth: -1}, 0); err == nil {
		t.Fatal("negative depth accepted")
	}
	for i := range maxVias {
		if _, err := m.AddRequest("a.example", Entry{URL: fmt.Sprint("https://a.example/", i), Via: fmt.Sprint("v", i)}, 0); err != nil {
			t.Fatal(err)
		}
	}
	_, err := m.AddRequest("a.example", Entry{URL: "https://a.example/last", Via: "one too many"}, 0)
	if !errors.Is(err, ErrTooManyVias) {
		t.Fatalf("the 256th Via: %v; want ErrTooManyVias", err)
	}
}

func TestMemoryOriginsListsNonEmptyQueues(t *testing.T) {
	m := NewMemory()
	m.AddRequest("a.example", Entry{URL: "https://a.example/"}, 0)
	m.AddRequest("b.example", Entry{URL: "https://b.example/"}, 0)
	m.GetRequest("b.example")
	keys, _ := m.Origins()
	if !slices.Equal(keys, []string{"a.example"}) {
		t.Fatalf("Origins = %v; want [a.example]", keys)
	}
}

// FuzzPush offers arbitrary URLs: Push never panics, refuses with a typed error, and what it
// queues comes out normalised, with its depth and via, and is a duplicate when offered again.
func FuzzPush(f *testing.F) {
	for _, s := range []string{"https://example.org/a?b#c", "HTTP://EX.org:80", "http://[::1]:8080/x",
		"https://u:p@h/p%20q", "https://bücher.example/", "//x", "http://h:/", "https://h/a/../b"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, raw string, depth int) {
		depth = max(depth, 0)
		fr := newTestFrontier(t, Options{})
		a, err := fr.Push(Entry{URL: raw, Depth: depth, Via: ViaLink})
		if err != nil {
			if !errors.Is(err, ErrBadURL) && !errors.Is(err, ErrURLTooLong) {
				t.Fatalf("Push(%q): untyped error %v", raw, err)
			}
			return
		}
		if a != Queued {
			t.Fatalf("Push(%q) into an empty frontier = %v", raw, a)
		}
		it := fr.next(t)
		if it.Depth != depth || it.Via != ViaLink || len(it.URL) > MaxURLBytes {
			t.Fatalf("Push(%q) came out as %+v", raw, it.Entry)
		}
		if again, _ := fr.Push(Entry{URL: raw, Depth: depth}); again != Duplicate {
			t.Fatalf("Push(%q) again = %v; want duplicate", raw, again)
		}
		// Normalisation is stable: the URL handed out is its own normal form.
		if again, _ := fr.Push(Entry{URL: it.URL, Depth: depth}); again != Duplicate {
			t.Fatalf("Push(%q), normalised from %q, = %v; want duplicate", it.URL, raw, again)
		}
	})
}

func TestHashSetRemembersWhatWasAdded(t *testing.T) {
	var s hashSet
	in := []uint64{0, 2, 1 << 63, ^uint64(0), 0x0100000000000000}
	for i := range 10_000 {
		in = append(in, uint64(i)*0x9E3779B97F4A7C15+7)
	}
	for _, h := range in {
		if s.has(h) {
			t.Fatalf("has(%#x) before add", h)
		}
		s.add(h)
	}
	for _, h := range in {
		if !s.has(h) {
			t.Fatalf("has(%#x) = false after add", h)
		}
	}
	for _, h := range []uint64{3, 1<<63 + 1, 0x0100000000000001} {
		if s.has(h) {
			t.Fatalf("has(%#x) = true; it was never added", h)
		}
	}
}
