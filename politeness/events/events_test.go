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

func TestBusRedactsPasswordsInURLs(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://example.org/a", "https://example.org/a"},
		{"http://user:secret@other.example/x?q=1", "http://user:xxxxx@other.example/x?q=1"},
		{"http://user@other.example/", "http://user@other.example/"}, // no password to hide
		{"https://example.org/mail/a@b.example", "https://example.org/mail/a@b.example"},
		{"http://user:secret@bad host/%zz", "http://xxxxx@bad host/%zz"}, // does not parse: all userinfo goes
		{"", ""},
	}
	var b Bus
	var got string
	b.Subscribe(func(e Event) { got = e.URL })
	for _, tt := range tests {
		b.Emit(Event{Type: Response, URL: tt.in})
		if got != tt.want {
			t.Errorf("Emit(%q): subscribers saw %q, want %q", tt.in, got, tt.want)
		}
	}
}
