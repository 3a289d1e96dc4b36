package frontier

import (
	"context"
	"sync"
	"testing"
	"time"
)

// gate blocks a Pacer or Storage call for one origin until the test releases it, and reports
// when a call has entered it: a shared store's round trip that takes its time (and retries for
// up to 30 s when Redis is away).
type gate struct {
	key     string
	entered chan struct{} // receives once per blocked call
	release chan struct{} // closed by the test
	once    sync.Once
}

func newGate(key string) *gate {
	return &gate{key: key, entered: make(chan struct{}, 16), release: make(chan struct{})}
}

func (g *gate) pass(key string) {
	if key != g.key {
		return
	}
	g.entered <- struct{}{}
	<-g.release
}

func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

// slowPacer blocks Earliest for the gate's origin.
type slowPacer struct{ g *gate }

func (p slowPacer) Earliest(key string) (time.Time, error) {
	p.g.pass(key)
	return time.Time{}, nil
}

// slowStorage is a Memory whose GetRequest blocks for the gate's origin, and whose Origins blocks
// when the gate's origin is "*".
type slowStorage struct {
	*Memory
	g *gate
}

func (s slowStorage) GetRequest(key string) (Entry, bool, error) {
	s.g.pass(key)
	return s.Memory.GetRequest(key)
}

func (s slowStorage) Origins() ([]string, error) {
	s.g.pass("*")
	return s.Memory.Origins()
}

func (s slowStorage) QueueSize(key string) (int, error) {
	s.g.pass("*")
	return s.Memory.QueueSize(key)
}

// pushOrError pushes u and reports a failure with t.Error, so it may run on another goroutine.
func pushOrError(t *testing.T, f *testFrontier, u string) {
	if _, err := f.Push(Entry{URL: u, Depth: 1, Via: ViaStart}); err != nil {
		t.Error(err)
	}
}

// within fails the test unless f returns while the gate still holds its call; the timer only
// keeps a broken frontier from hanging the suite.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		f()
		close(done)
	}()
	stop := time.NewTimer(10 * time.Second)
	defer stop.Stop()
	select {
	case <-done:
	case <-stop.C:
		t.Fatalf("%s did not return while a Pacer or Storage call of another worker was blocked", what)
	}
}

// A worker's Pacer or Storage call that takes long (a Redis round trip, retried) holds no other
// worker: Push and Ack complete while it is blocked, and the blocked Next hands out its URL once
// the call returns.
func TestASlowPacerOrStorageDoesNotBlockPushOrAck(t *testing.T) {
	tests := []struct {
		name  string
		setup func(g *gate) Options
	}{
		{"Pacer.Earliest", func(g *gate) Options { return Options{Pacer: slowPacer{g}} }},
		{"Storage.GetRequest", func(g *gate) Options { return Options{Storage: slowStorage{NewMemory(), g}} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGate("b.example")
			defer g.open()
			f := newTestFrontier(t, tt.setup(g))
			f.push(t, "https://a.example/1")
			a := f.next(t)
			f.push(t, "https://b.example/1")
			got := f.nextAsync(context.Background())
			<-g.entered // the worker is inside the slow call for b.example
			within(t, "Push", func() { pushOrError(t, f, "https://c.example/1") })
			within(t, "Ack", func() {
				if err := f.Ack(a, nil); err != nil {
					t.Error(err)
				}
			})
			within(t, "Stats", func() { f.Stats() })
			g.open()
			if r := result(t, got); r.err != nil || r.it.URL != "https://b.example/1" {
				t.Fatalf("the blocked Next returned %q, %v; want b.example's URL", r.it.URL, r.err)
			}
			if it := f.next(t); it.URL != "https://c.example/1" {
				t.Fatalf("next = %q, want the URL pushed meanwhile", it.URL)
			}
		})
	}
}

// Before it declares the crawl over, the frontier asks the storage what it holds; a Push made
// while that question is out completes at once, and the Next that asked hands out the pushed URL
// instead of ErrExhausted.
func TestASlowStorageScanDoesNotBlockPush(t *testing.T) {
	g := newGate("*")
	defer g.open()
	f := newTestFrontier(t, Options{Storage: slowStorage{NewMemory(), g}})
	got := f.nextAsync(context.Background())
	<-g.entered // Next is asking the storage for its origins
	within(t, "Push", func() { pushOrError(t, f, "https://a.example/1") })
	g.open()
	if r := result(t, got); r.err != nil || r.it.URL != "https://a.example/1" {
		t.Fatalf("Next returned %q, %v; want the URL pushed while it asked the storage", r.it.URL, r.err)
	}
}
