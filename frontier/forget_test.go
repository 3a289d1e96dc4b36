package frontier

import (
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/hostclock"
)

// known reports whether the frontier keeps key's state.
func (tf *testFrontier) known(key string) bool {
	tf.mu.Lock()
	defer tf.mu.Unlock()
	_, ok := tf.origins[key]
	return ok
}

// An origin with nothing queued, in progress or held, unused for ForgetAfter, is forgotten —
// its queue in the storage too — and its counters still show in Stats, and carry on when it is
// used again.
func TestIdleOriginsAreForgottenAndStillCounted(t *testing.T) {
	mem := NewMemory()
	f := newTestFrontier(t, Options{Storage: mem})
	f.push(t, "https://a.example/1")
	if err := f.Ack(f.next(t), nil); err != nil {
		t.Fatal(err)
	}
	f.push(t, "https://a.example/1") // a duplicate
	f.tm.Advance(DefaultForgetAfter)
	f.push(t, "https://b.example/1") // lets the frontier sweep
	if f.known("a.example") {
		t.Fatal("a.example still kept after DefaultForgetAfter with nothing queued or in progress")
	}
	mem.mu.Lock()
	_, queue := mem.queues["a.example"]
	mem.mu.Unlock()
	if queue {
		t.Error("the storage still keeps a.example's empty queue")
	}
	want := OriginStats{Origin: "a.example", Done: 1, Duplicates: 1}
	if st := f.Stats(); len(st) != 2 || st[0] != want {
		t.Fatalf("Stats = %+v; want a.example's counters %+v kept", st, want)
	}
	f.push(t, "https://a.example/1", "https://a.example/2")
	if err := f.Ack(f.next(t), nil); err != nil { // b.example's URL, queued first
		t.Fatal(err)
	}
	if err := f.Ack(f.next(t), nil); err != nil {
		t.Fatal(err)
	}
	want = OriginStats{Origin: "a.example", Done: 2, Duplicates: 2}
	if st := f.Stats(); st[0] != want {
		t.Fatalf("Stats after a.example came back = %+v, want %+v", st[0], want)
	}
}

// Forgetting an origin never lets it go sooner: the interval hint of its last dispatch still
// holds when it comes back, queued, in-progress and Source-held origins are kept, and a URL seen
// before is still a duplicate.
func TestForgettingKeepsTheHintAndTheRecordOfURLs(t *testing.T) {
	f := newTestFrontier(t, Options{Rate: 2, ForgetAfter: time.Millisecond})
	hint := hostclock.Config{}.Interval(2)
	f.push(t, "https://a.example/1")
	first := f.next(t)
	if err := f.Ack(first, nil); err != nil {
		t.Fatal(err)
	}
	f.tm.Advance(100 * time.Millisecond) // idle far longer than ForgetAfter, not longer than the hint
	f.push(t, "https://other.example/1")
	if err := f.Ack(f.next(t), nil); err != nil {
		t.Fatal(err)
	}
	f.push(t, "https://a.example/2")
	got := f.waiting(t)
	f.tm.Advance(hint - 100*time.Millisecond)
	if r := result(t, got); r.err != nil || r.it.URL != "https://a.example/2" {
		t.Fatalf("Next = %q, %v", r.it.URL, r.err)
	}
	if a, _ := f.Push(Entry{URL: "https://a.example/1", Depth: 1, Via: ViaStart}); a != Duplicate {
		t.Errorf("a URL fetched before an origin was forgotten was %v, want duplicate", a)
	}

	src, err := f.OpenSource("https://held.example/")
	if err != nil {
		t.Fatal(err)
	}
	f.tm.Advance(time.Hour)
	f.push(t, "https://c.example/1", "https://d.example/1")
	if !f.known("held.example") {
		t.Error("an origin a Source holds was forgotten")
	}
	src.Close()
}
