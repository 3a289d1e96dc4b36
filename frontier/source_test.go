package frontier

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestAHeldOriginHandsOutOnlyWhatItsSourceAdmits(t *testing.T) {
	f := newTestFrontier(t, Options{Concurrency: 4})
	src, err := f.OpenSource("https://a.example/")
	if err != nil {
		t.Fatal(err)
	}
	f.push(t, "https://a.example/start", "https://a.example/page1", "https://a.example/page2", "https://b.example/other")

	// Another origin is not held back.
	if it := f.next(t); it.URL != "https://b.example/other" {
		t.Fatalf("Next = %s; want the other origin's URL while a.example is held", it.URL)
	}
	got := f.waiting(t)
	src.Admit(1)
	start := result(t, got)
	if start.err != nil || start.it.URL != "https://a.example/start" {
		t.Fatalf("after Admit(1): Next = %q, %v; want the first queued URL", start.it.URL, start.err)
	}
	f.Granted(start.it)
	f.tm.Advance(time.Second) // past the interval hint
	got = f.waiting(t)
	src.Release()
	if r := result(t, got); r.err != nil || r.it.URL != "https://a.example/page1" {
		t.Fatalf("after Release: Next = %q, %v; want page1", r.it.URL, r.err)
	}
}

func TestAnOpenSourceKeepsTheCrawlGoing(t *testing.T) {
	f := newTestFrontier(t, Options{})
	src, err := f.OpenSource("https://a.example/sitemap.xml")
	if err != nil {
		t.Fatal(err)
	}
	src.Release()
	got := f.waiting(t) // nothing queued, nothing in progress, but the source may bring more
	if _, err := f.Push(Entry{URL: "https://a.example/from-sitemap", Depth: 1, Via: ViaSitemap}); err != nil {
		t.Fatal(err)
	}
	r := result(t, got)
	if r.err != nil || r.it.Via != ViaSitemap {
		t.Fatalf("Next = %+v, %v; want the pushed URL", r.it, r.err)
	}
	if err := f.Ack(r.it, nil); err != nil {
		t.Fatal(err)
	}
	got = f.waiting(t)
	src.Close()
	if r := result(t, got); !errors.Is(r.err, ErrExhausted) {
		t.Fatalf("after Close: Next: %v; want ErrExhausted", r.err)
	}
	src.Close() // a second Close does nothing
	if _, err := f.Next(context.Background()); !errors.Is(err, ErrExhausted) {
		t.Fatalf("after a second Close: Next: %v; want ErrExhausted", err)
	}
}

func TestLowFiresWhenTheOriginsQueueRunsDownToTheMark(t *testing.T) {
	tests := []struct {
		name   string
		queued int
		mark   int
		takes  int // URLs handed out before the channel must be closed
	}{
		{"already low", 2, 2, 0},
		{"empty", 0, 0, 0},
		{"after two of five are taken", 5, 3, 2},
		{"only when the last is taken", 3, 0, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestFrontier(t, Options{Concurrency: 10})
			src, err := f.OpenSource("https://a.example/")
			if err != nil {
				t.Fatal(err)
			}
			src.Release()
			for i := range tt.queued {
				if _, err := f.Push(Entry{URL: "https://a.example/" + string(rune('a'+i)), Depth: 1}); err != nil {
					t.Fatal(err)
				}
			}
			low := src.Low(tt.mark)
			for i := range tt.takes {
				select {
				case <-low:
					t.Fatalf("Low(%d) fired with %d of %d URLs taken", tt.mark, i, tt.queued)
				default:
				}
				f.Granted(f.next(t))
				f.tm.Advance(time.Second) // past the interval hint
			}
			select {
			case <-low:
			default:
				t.Fatalf("Low(%d) did not fire after %d of %d URLs were taken", tt.mark, tt.takes, tt.queued)
			}
		})
	}
}

func TestOpenSourceRefusesAURLWithoutOrigin(t *testing.T) {
	f := newTestFrontier(t, Options{})
	if _, err := f.OpenSource("mailto:bot@example.org"); !errors.Is(err, ErrBadURL) {
		t.Fatalf("OpenSource: %v; want ErrBadURL", err)
	}
}
