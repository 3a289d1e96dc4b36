// This file decides the live progress line a crawl shows on a terminal: per origin, requests
// done, URLs queued and requests waiting.

package report

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/politecrawl/etiquette/politeness/events"
)

// Pending is what a crawl holds for one origin at a moment: URLs queued, and requests handed to
// the door and not yet answered — waiting for a start slot, a pause, or the site. A crawl on a
// frontier takes both from frontier.Frontier.Stats (Queued, InProgress).
type Pending struct {
	Queued, Waiting int
}

// progressEvery is how often the line is redrawn.
const progressEvery = 250 * time.Millisecond

// Progress shows a crawl's progress on one line of a terminal, redrawn four times a second by
// github.com/schollz/progressbar: requests done (answers and refusals, from the events), and
// URLs queued and requests waiting (from the crawl), in all and per origin. On anything but a
// terminal — as golang.org/x/term's IsTerminal tells — it draws nothing. Subscribe Record to the
// door's bus; write log records through the Progress (it is an io.Writer), so they appear above
// the line instead of on it; Close it before printing anything else to the same file. Safe for
// concurrent use.
type Progress struct {
	mu      sync.Mutex
	done    map[string]int
	labels  map[string]string // origin → name ([Progress.Name])
	pending func() map[string]Pending
	w       io.Writer
	term    *os.File // w when it is a terminal; nil when not drawing

	// out serialises what reaches the terminal: the bar's drawing and the records written
	// through Write (progressbar's Clear does not take the bar's lock).
	out     sync.Mutex
	bar     *progressbar.ProgressBar // nil when not drawing
	closed  bool                     // the line was cleared for good (guarded by out)
	stop    chan struct{}
	stopped chan struct{}
}

// NewProgress starts the progress line on w when w is a terminal (an *os.File that
// golang.org/x/term says is one). pending, when not nil, is called from the drawing goroutine
// (never from Record) for the counts the events do not carry; it must be safe to call at any
// time.
func NewProgress(w io.Writer, pending func() map[string]Pending) *Progress {
	p := &Progress{done: map[string]int{}, pending: pending, w: w}
	f, ok := w.(*os.File)
	if !ok || f == nil || !term.IsTerminal(int(f.Fd())) {
		return p
	}
	p.term = f
	p.bar = progressbar.NewOptions(-1, progressbar.OptionSetWriter(f), progressbar.OptionSpinnerType(14),
		progressbar.OptionSetElapsedTime(true), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(progressEvery))
	p.stop, p.stopped = make(chan struct{}), make(chan struct{})
	go p.draw(p.stop)
	return p
}

// Write writes b — whole lines, such as a log record — to the file. While the line is drawn it
// is cleared first and drawn again below b, so that b never lands on it. Without a file (a nil
// writer) b is dropped.
func (p *Progress) Write(b []byte) (int, error) {
	if p.w == nil {
		return len(b), nil
	}
	p.out.Lock()
	defer p.out.Unlock()
	if p.bar == nil || p.closed {
		return p.w.Write(b)
	}
	_ = p.bar.Clear()
	n, err := p.w.Write(b)
	if len(b) > 0 && b[len(b)-1] == '\n' {
		_ = p.bar.RenderBlank() // at once, not at the next tick: nothing has been added to the bar
	}
	return n, err
}

// Record counts an answer or a refusal as a request done.
func (p *Progress) Record(e events.Event) {
	if e.Type != events.Response && e.Type != events.Refused {
		return
	}
	key := originOf(e)
	p.mu.Lock()
	p.done[key]++
	p.mu.Unlock()
}

// Close stops drawing and clears the line. Close may be called more than once.
func (p *Progress) Close() {
	if p.bar == nil {
		return
	}
	p.mu.Lock()
	stop := p.stop
	p.stop = nil
	p.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-p.stopped
	p.out.Lock()
	defer p.out.Unlock()
	p.closed = true
	_ = p.bar.Finish()
}

// draw redraws the line every tick until stop is closed (Close sets p.stop to nil, so draw
// keeps its own copy).
func (p *Progress) draw(stop <-chan struct{}) {
	defer close(p.stopped)
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		var pending map[string]Pending
		if p.pending != nil {
			pending = p.pending()
		}
		width, _, err := term.GetSize(int(p.term.Fd()))
		if err != nil || width <= 0 {
			width = 100 // a terminal that does not say its width
		}
		p.mu.Lock()
		line := progressLine(named(p.done, p.labels), named(pending, p.labels), width-30) // room for the spinner and the clock
		p.mu.Unlock()
		p.out.Lock()
		p.bar.Describe(line)
		p.out.Unlock()
		select {
		case <-tick.C:
		case <-stop:
			return
		}
	}
}

// progressLine is "12 done · 5 queued · 1 waiting | a:1 4/2/1 · b:2 8/3/0", the per-origin
// part (done/queued/waiting, busiest origins first) cut to fit width.
func progressLine(done map[string]int, pending map[string]Pending, width int) string {
	var total Pending
	totalDone := 0
	keys := map[string]bool{}
	for k, n := range done {
		totalDone += n
		keys[k] = true
	}
	for k, q := range pending {
		total.Queued += q.Queued
		total.Waiting += q.Waiting
		keys[k] = true
	}
	line := fmt.Sprintf("%d done · %d queued · %d waiting", totalDone, total.Queued, total.Waiting)
	order := slices.Sorted(maps.Keys(keys))
	slices.SortStableFunc(order, func(a, b string) int {
		return (pending[b].Queued + pending[b].Waiting) - (pending[a].Queued + pending[a].Waiting)
	})
	var parts []string
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%s %d/%d/%d", k, done[k], pending[k].Queued, pending[k].Waiting))
	}
	if len(parts) == 0 {
		return line
	}
	full := []rune(line + " | " + strings.Join(parts, " · "))
	switch {
	case len(full) <= width:
		return string(full)
	case width < len([]rune(line))+5:
		return line
	}
	return string(full[:width-1]) + "…"
}
