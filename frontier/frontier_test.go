package frontier

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/hostclock"
)

func TestPushTreatsSpellingsOfOneURLAsOne(t *testing.T) {
	tests := []struct {
		first, second string
		want          Admission
	}{
		{"https://example.org/a", "https://example.org/a", Duplicate},
		{"https://example.org/a", "HTTPS://Example.ORG/a", Duplicate},
		{"https://example.org/a", "https://example.org:443/a", Duplicate},
		{"https://example.org/a", "https://example.org/a#section", Duplicate},
		{"https://example.org", "https://example.org/", Duplicate},
		{"https://bücher.example/a", "https://xn--bcher-kva.example/a", Duplicate},
		{"https://example.org/a", "http://example.org/a", Queued},  // another scheme is another URL
		{"https://example.org/a", "https://example.org/A", Queued}, // paths are case-sensitive
		{"https://example.org/a?x=1&y=2", "https://example.org/a?y=2&x=1", Queued},
		{"https://example.org/a%2Fb", "https://example.org/a/b", Queued},
		{"https://example.org:8443/a", "https://example.org/a", Queued},
	}
	for _, tt := range tests {
		t.Run(tt.first+" then "+tt.second, func(t *testing.T) {
			f := newTestFrontier(t, Options{})
			if a, err := f.Push(Entry{URL: tt.first, Depth: 1}); err != nil || a != Queued {
				t.Fatalf("first Push = %v, %v; want queued", a, err)
			}
			a, err := f.Push(Entry{URL: tt.second, Depth: 1})
			if err != nil || a != tt.want {
				t.Fatalf("second Push = %v, %v; want %v", a, err, tt.want)
			}
		})
	}
}

func TestPushRefusesWhatItCannotFetch(t *testing.T) {
	tests := []struct {
		url  string
		want error
	}{
		{"/relative/path", ErrBadURL},
		{"mailto:bot@example.org", ErrBadURL},
		{"ftp://example.org/file", ErrBadURL},
		{"http:opaque", ErrBadURL},
		{"https:///no-host", ErrBadURL},
		{"https://example.org/%zz", ErrBadURL},
		{"https://example.org/" + strings.Repeat("a", MaxURLBytes), ErrURLTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.url[:min(len(tt.url), 40)], func(t *testing.T) {
			f := newTestFrontier(t, Options{})
			if _, err := f.Push(Entry{URL: tt.url, Depth: 1}); !errors.Is(err, tt.want) {
				t.Fatalf("Push: %v; want %v", err, tt.want)
			}
		})
	}
}

func TestNextHandsOutTheNormalisedURLWithItsDepthAndVia(t *testing.T) {
	f := newTestFrontier(t, Options{})
	if _, err := f.Push(Entry{URL: "HTTP://User:Pw@Example.ORG:80?q#frag", Depth: 7, Via: ViaSitemap}); err != nil {
		t.Fatal(err)
	}
	it := f.next(t)
	want := Entry{URL: "http://User:Pw@example.org/?q", Depth: 7, Via: ViaSitemap}
	if it.Entry != want || it.Key != "example.org" {
		t.Fatalf("Next = %+v under %q; want %+v under example.org", it.Entry, it.Key, want)
	}
}

func TestAFullQueueDropsAndCountsPerOrigin(t *testing.T) {
	f := newTestFrontier(t, Options{MaxQueued: 3})
	var got []Admission
	for i := range 5 {
		a, err := f.Push(Entry{URL: "https://full.example/" + string(rune('a'+i)), Depth: 1})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, a)
	}
	f.push(t, "https://other.example/a")
	want := []Admission{Queued, Queued, Queued, Dropped, Dropped}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("admissions %v; want %v", got, want)
		}
	}
	stats := f.Stats()
	if len(stats) != 2 || stats[0].Origin != "full.example" || stats[0].Dropped != 2 || stats[0].Queued != 3 ||
		stats[1].Dropped != 0 || stats[1].Queued != 1 {
		t.Fatalf("Stats = %+v; want full.example 3 queued 2 dropped, other.example 1 queued", stats)
	}
	// A dropped URL is not remembered: once there is room it can be queued.
	f.Ack(f.next(t), nil)
	if a, _ := f.Push(Entry{URL: "https://full.example/d", Depth: 1}); a != Queued {
		t.Fatalf("re-offered dropped URL: %v; want queued", a)
	}
}

func TestAWorkerGetsAReadyOriginWhileAnotherMustWait(t *testing.T) {
	p := newFakePacer()
	f := newTestFrontier(t, Options{Pacer: p})
	p.set("slow.example", epoch.Add(5*time.Second))
	f.push(t, "https://slow.example/1", "https://fast.example/1")
	if it := f.next(t); it.Key != "fast.example" {
		t.Fatalf("Next = %s; want the ready origin fast.example first", it.URL)
	}
	// slow.example is due in 5 s: Next sleeps on a timer for it, not in a loop.
	got := f.waiting(t)
	f.tm.Advance(5 * time.Second)
	if r := result(t, got); r.err != nil || r.it.Key != "slow.example" {
		t.Fatalf("after 5 s Next = %q, %v; want slow.example", r.it.URL, r.err)
	}
}

func TestAnOriginIsNotDispatchedAgainUntilItsRequestIsGranted(t *testing.T) {
	p := newFakePacer() // always "now": only the frontier's own rule holds the second URL back
	f := newTestFrontier(t, Options{Pacer: p})
	f.push(t, "https://a.example/1", "https://a.example/2")
	first := f.next(t)
	got := f.waiting(t)
	f.Granted(first)
	if r := result(t, got); r.err != nil || r.it.URL != "https://a.example/2" {
		t.Fatalf("after Granted Next = %q, %v; want the second URL", r.it.URL, r.err)
	}
}

func TestAtMostConcurrencyURLsOfAnOriginAreInProgress(t *testing.T) {
	f := newTestFrontier(t, Options{Pacer: newFakePacer(), Concurrency: 2})
	f.push(t, "https://a.example/1", "https://a.example/2", "https://a.example/3")
	one := f.next(t)
	f.Granted(one)
	two := f.next(t)
	f.Granted(two)
	got := f.waiting(t)
	if err := f.Ack(one, nil); err != nil {
		t.Fatal(err)
	}
	if r := result(t, got); r.err != nil || r.it.URL != "https://a.example/3" {
		t.Fatalf("after Ack Next = %q, %v; want the third URL", r.it.URL, r.err)
	}
}

func TestWithoutAPacerTheIntervalHintSpacesDispatches(t *testing.T) {
	f := newTestFrontier(t, Options{Rate: 2})
	hint := hostclock.Config{}.Interval(2) // as the door's clock spaces them
	f.push(t, "https://a.example/1", "https://a.example/2")
	first := f.next(t)
	f.Granted(first)
	got := f.waiting(t)
	f.tm.Advance(hint - time.Millisecond)
	select {
	case r := <-got:
		t.Fatalf("Next returned %q after %s; want it to wait %s", r.it.URL, hint-time.Millisecond, hint)
	default:
	}
	f.tm.Advance(time.Millisecond)
	if r := result(t, got); r.err != nil || r.it.URL != "https://a.example/2" {
		t.Fatalf("after %s Next = %q, %v; want the second URL", hint, r.it.URL, r.err)
	}
}

func TestTheSoonestOriginWakesAWaitingWorker(t *testing.T) {
	p := newFakePacer()
	f := newTestFrontier(t, Options{Pacer: p})
	p.set("late.example", epoch.Add(9*time.Second))
	p.set("soon.example", epoch.Add(2*time.Second))
	f.push(t, "https://late.example/1", "https://soon.example/1")
	got := f.waiting(t)
	f.tm.Advance(2 * time.Second)
	if r := result(t, got); r.err != nil || r.it.Key != "soon.example" {
		t.Fatalf("Next = %q, %v; want soon.example after 2 s", r.it.URL, r.err)
	}
}

func TestPushWakesAWaitingWorker(t *testing.T) {
	f := newTestFrontier(t, Options{})
	f.push(t, "https://a.example/1")
	held := f.next(t) // in progress: the frontier is not exhausted, so Next waits
	got := f.waiting(t)
	f.push(t, "https://b.example/1")
	if r := result(t, got); r.err != nil || r.it.Key != "b.example" {
		t.Fatalf("Next = %q, %v; want the pushed URL", r.it.URL, r.err)
	}
	_ = held
}

func TestAGivenUpOriginsURLsAreHandedOutRefused(t *testing.T) {
	gu := &hostclock.GiveUpError{Origin: "gone.example", Reason: "8 failures in a row", At: epoch}
	tests := []struct {
		name        string
		giveUp      func(t *testing.T, f *testFrontier, p *fakePacer)
		wantRefused int
	}{
		{"the pacer says so", func(t *testing.T, f *testFrontier, p *fakePacer) { p.fail("gone.example", gu) }, 3},
		{"a fetch failed with the give-up", func(t *testing.T, f *testFrontier, p *fakePacer) {
			f.Ack(f.next(t), fmt.Errorf("get: %w", gu))
		}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newFakePacer()
			f := newTestFrontier(t, Options{Pacer: p})
			f.push(t, "https://gone.example/1", "https://gone.example/2", "https://gone.example/3")
			tt.giveUp(t, f, p)
			for range tt.wantRefused {
				it := f.next(t)
				var got *hostclock.GiveUpError
				if !errors.As(it.Refused, &got) {
					t.Fatalf("item %s: Refused = %v; want the give-up", it.URL, it.Refused)
				}
				f.Ack(it, nil)
			}
			if _, err := f.Next(context.Background()); !errors.Is(err, ErrExhausted) {
				t.Fatalf("after the drain Next: %v; want ErrExhausted", err)
			}
			st := f.Stats()[0]
			if st.GaveUp == "" || st.Queued != 0 || st.Refused != int64(tt.wantRefused) || st.Refused+st.Done != 3 {
				t.Fatalf("Stats = %+v; want the origin given up, %d refused, every URL accounted for", st, tt.wantRefused)
			}
		})
	}
}

func TestTheFrontierIsExhaustedOnlyWhenNothingIsInProgress(t *testing.T) {
	f := newTestFrontier(t, Options{})
	if _, err := f.Next(context.Background()); !errors.Is(err, ErrExhausted) {
		t.Fatalf("empty frontier: Next: %v; want ErrExhausted", err)
	}
	f.push(t, "https://a.example/1")
	it := f.next(t)
	// The queue is empty, but the page in progress may bring links: Next waits for it.
	got := f.waiting(t)
	if err := f.Ack(it, nil); err != nil {
		t.Fatal(err)
	}
	if r := result(t, got); !errors.Is(r.err, ErrExhausted) {
		t.Fatalf("after the last Ack Next: %v; want ErrExhausted", r.err)
	}
}

func TestCloseWakesWorkersAndDrainYieldsWhatIsLeft(t *testing.T) {
	p := newFakePacer()
	f := newTestFrontier(t, Options{Pacer: p})
	p.set("a.example", epoch.Add(time.Hour))
	f.push(t, "https://a.example/1", "https://a.example/2", "https://b.example/1")
	it := f.next(t) // b.example/1
	got := f.waiting(t)
	f.Close()
	if r := result(t, got); !errors.Is(r.err, ErrClosed) {
		t.Fatalf("after Close Next: %v; want ErrClosed", r.err)
	}
	f.Ack(it, nil)
	var left []string
	for e := range f.Drain() {
		left = append(left, e.URL)
	}
	if strings.Join(left, " ") != "https://a.example/1 https://a.example/2" {
		t.Fatalf("Drain yielded %v; want a.example's two URLs in order", left)
	}
	if st := f.Stats()[0]; st.Drained != 2 || st.Queued != 0 {
		t.Fatalf("Stats = %+v; want 2 drained, none queued", st)
	}
}

func TestAPacerThatFailsStopsTheCrawl(t *testing.T) {
	p := newFakePacer()
	p.fail("a.example", errors.New("redis: connection refused"))
	f := newTestFrontier(t, Options{Pacer: p})
	f.push(t, "https://a.example/1")
	if _, err := f.Next(context.Background()); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Next: %v; want the pacer's error", err)
	}
}

func TestNextReturnsWhenItsContextEnds(t *testing.T) {
	f := newTestFrontier(t, Options{})
	f.push(t, "https://a.example/1")
	f.next(t)
	ctx, cancel := context.WithCancel(context.Background())
	f.forgetWaits()
	got := f.nextAsync(ctx)
	<-f.waits
	cancel()
	if r := result(t, got); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("Next: %v; want context.Canceled", r.err)
	}
}

func TestNewRefusesNegativeOptions(t *testing.T) {
	for _, o := range []Options{{Rate: -1}, {Concurrency: -1}, {MaxQueued: -1}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) succeeded; want an error", o)
		}
	}
}
