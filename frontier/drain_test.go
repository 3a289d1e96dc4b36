package frontier

import "testing"

// A process of a shared crawl that stops early leaves the queue to the others: Drain takes
// nothing from a shared storage.
func TestDrainLeavesASharedQueueToTheOtherProcesses(t *testing.T) {
	store := &sharedMemory{Memory: NewMemory()}
	tf := newTestFrontier(t, Options{Storage: store})
	tf.push(t, "http://a.example/1", "http://a.example/2")
	tf.Close()
	for e := range tf.Drain() {
		t.Errorf("Drain took %s from the shared queue", e.URL)
	}
	// Another process of the crawl finds both URLs in the storage.
	other := newTestFrontier(t, Options{Storage: store})
	if it := other.next(t); it.URL != "http://a.example/1" {
		t.Fatalf("the other process got %q, want http://a.example/1", it.URL)
	}
	if n, _ := store.QueueSize("a.example"); n != 1 {
		t.Errorf("%d URLs left in the shared queue after the other process took one, want 1", n)
	}
}
