package frontier

import (
	"errors"
	"sync"
	"testing"
)

// sharedMemory is a Memory that another process shares: it holds taken URLs the test sets, and
// the test can queue URLs as that process would.
type sharedMemory struct {
	*Memory
	mu    sync.Mutex
	taken int
}

func (s *sharedMemory) Taken() (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.taken, nil
}

func (s *sharedMemory) setTaken(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.taken = n
}

func TestASharedCrawlIsNotOverWhileAnotherProcessHoldsURLs(t *testing.T) {
	store := &sharedMemory{Memory: NewMemory()}
	tf := newTestFrontier(t, Options{Storage: store})
	store.setTaken(1) // another process reads a page

	got := tf.waiting(t)
	// That process's page brought a link, queued in the shared storage, and it acknowledged its URL.
	if _, err := store.AddRequest("a.example", Entry{URL: "http://a.example/found", Depth: 2, Via: ViaLink}, 0); err != nil {
		t.Fatal(err)
	}
	store.setTaken(0)
	tf.tm.Advance(SharedRecheck)
	r := result(t, got)
	if r.err != nil || r.it.URL != "http://a.example/found" {
		t.Fatalf("Next = %q, %v; want the URL the other process queued", r.it.URL, r.err)
	}
	if err := tf.Ack(r.it, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tf.Next(t.Context()); !errors.Is(err, ErrExhausted) {
		t.Fatalf("Next with nothing queued or held anywhere = %v, want ErrExhausted", err)
	}
}

// A process that follows another process's discovery keeps a Source open (its crawl is not over
// while that discovery may bring URLs) and has released its hold: the URLs the other process
// queues reach it through the shared storage, not through its own Push.
func TestASharedCrawlWithAnOpenSourceTakesURLsAnotherProcessQueued(t *testing.T) {
	store := &sharedMemory{Memory: NewMemory()}
	tf := newTestFrontier(t, Options{Storage: store})
	src, err := tf.OpenSource("http://a.example/")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	src.Release()

	got := tf.waiting(t)
	if _, err := store.AddRequest("a.example", Entry{URL: "http://a.example/listed", Depth: 1, Via: ViaSitemap}, 0); err != nil {
		t.Fatal(err)
	}
	tf.tm.Advance(SharedRecheck)
	r := result(t, got)
	if r.err != nil || r.it.URL != "http://a.example/listed" {
		t.Fatalf("Next = %q, %v; want the URL the other process's discovery queued", r.it.URL, r.err)
	}
}
