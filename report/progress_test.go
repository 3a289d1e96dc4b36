package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/politecrawl/etiquette/politeness/events"
)

func TestProgressLine(t *testing.T) {
	done := map[string]int{"a:1": 4, "b:2": 8}
	pending := map[string]Pending{"a:1": {Queued: 2, Waiting: 1}, "b:2": {Queued: 3}, "c:3": {Queued: 9, Waiting: 2}}
	tests := []struct {
		name    string
		done    map[string]int
		pending map[string]Pending
		width   int
		want    string
	}{
		{"nothing yet", nil, nil, 80, "0 done · 0 queued · 0 waiting"},
		{"per origin, most pending first, then by name", done, pending, 200,
			"12 done · 14 queued · 3 waiting | c:3 0/9/2 · a:1 4/2/1 · b:2 8/3/0"},
		{"cut to the width", done, pending, 50, "12 done · 14 queued · 3 waiting | c:3 0/9/2 · a:1…"},
		{"too narrow for origins", done, pending, 20, "12 done · 14 queued · 3 waiting"},
		{"done only, without a pending callback", done, nil, 200, "12 done · 0 queued · 0 waiting | a:1 4/0/0 · b:2 8/0/0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := progressLine(tt.done, tt.pending, tt.width); got != tt.want {
				t.Errorf("progressLine = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestProgressDrawsNothingOffATerminal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stderr")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	called := false
	p := NewProgress(f, func() map[string]Pending { called = true; return nil })
	p.Record(events.Event{Type: events.Response, Origin: "a.test"})
	p.Record(events.Event{Type: events.Waited, Origin: "a.test"})
	p.Close()
	p.Close()
	if info, err := os.Stat(path); err != nil || info.Size() != 0 {
		t.Errorf("progress wrote %d bytes to a file that is not a terminal (%v)", info.Size(), err)
	}
	if called {
		t.Error("the pending callback was called though nothing is drawn")
	}
	if p.done["a.test"] != 1 {
		t.Errorf("done = %v, want the one response", p.done)
	}
	NewProgress(nil, nil).Close()
}

func FuzzDecidingRule(f *testing.F) {
	for _, s := range []string{
		`robots.txt disallows http://a/x for Bot: line 9 "Disallow: /x" disallows: the longest match in the group (RFC 9309 §2.2.2); this crawler must not fetch it`,
		`robots.txt disallows http://a/x for Bot: robots.txt answered 503: treating the origin as disallowed until 2026-01-01 00:00:00 UTC (RFC 9309 §2.3.1.4); this crawler must not fetch it`,
		`robots.txt disallows http://a/x for Bot: line 9 "unterminated`,
		"x for : line ", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, detail string) {
		rule := decidingRule(detail)
		if len(rule) > len(detail) {
			t.Errorf("rule %q is longer than the detail %q it came from", rule, detail)
		}
	})
}

// TestProgressWritesThroughOffATerminal: off a terminal, what is written through the progress
// reaches its writer unchanged (a crawl's log records, in tests and pipes); without a writer it
// is dropped.
func TestProgressWritesThroughOffATerminal(t *testing.T) {
	var buf strings.Builder
	p := NewProgress(&buf, nil)
	if n, err := p.Write([]byte("level=WARN msg=x\n")); n != 17 || err != nil {
		t.Errorf("Write = %d, %v", n, err)
	}
	p.Close()
	if buf.String() != "level=WARN msg=x\n" {
		t.Errorf("the writer got %q", buf.String())
	}
	if n, err := NewProgress(nil, nil).Write([]byte("dropped\n")); n != 8 || err != nil {
		t.Errorf("Write without a writer = %d, %v", n, err)
	}
}
