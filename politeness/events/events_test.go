package events

import (
	"sync"
	"testing"
)

func TestBusDeliversInSubscriptionOrderAndUnsubscribes(t *testing.T) {
	var b Bus
	var got []string
	cancelA := b.Subscribe(func(e Event) { got = append(got, "a:"+e.URL) })
	b.Subscribe(func(e Event) { got = append(got, "b:"+e.URL) })
	b.Emit(Event{Type: Admitted, URL: "1"})
	cancelA()
	cancelA() // twice is harmless
	b.Emit(Event{Type: Admitted, URL: "2"})
	want := []string{"a:1", "b:1", "b:2"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestBusStampsTimeAndIsSafeForConcurrentUse(t *testing.T) {
	var b Bus
	var mu sync.Mutex
	n := 0
	b.Subscribe(func(e Event) {
		if e.Time.IsZero() {
			t.Error("event without time")
		}
		mu.Lock()
		n++
		mu.Unlock()
	})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				b.Emit(Event{Type: Response})
				cancel := b.Subscribe(func(Event) {})
				cancel()
			}
		}()
	}
	wg.Wait()
	if n != 800 {
		t.Errorf("delivered %d events, want 800", n)
	}
}
