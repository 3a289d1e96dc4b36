// This file decides the live progress line a crawl shows on a terminal: per origin, requests
// done, URLs queued and requests waiting.

package report

import (
	"fmt"
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
// door's bus; Close it before printing anything else to the same file. Safe for concurrent use.
type Progress struct {
	mu      sync.Mutex
	done    map[string]int
	labels  map[string]string // origin → name ([Progress.Name])
	pending func() map[string]Pending
	w       *os.File
	bar     *progressbar.ProgressBar // nil when not drawing
	stop    chan struct{}
	stopped chan struct{}
}

// NewProgress starts the progress line on w when w is a terminal. pending, when not nil, is
// called from the drawing goroutine (never from Record) for the counts the events do not carry;
// it must be safe to call at any time.
func NewProgress(w *os.File, pending func() map[string]Pending) *Progress {
	p := &Progress{done: map[string]int{}, pending: pending, w: w}
	if w == nil || !term.IsTerminal(int(w.Fd())) {
		return p
	}
	p.bar = progressbar.NewOptions(-1, progressbar.OptionSetWriter(w), progressbar.OptionSpinnerType(14),
		progressbar.OptionSetElapsedTime(true), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(progressEvery))
	p.stop, p.stopped = make(chan struct{}), make(chan struct{})
	go p.draw()
	return p
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
	_ = p.bar.Finish()
}

func (p *Progress) draw() {
	defer close(p.stopped)
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		var pending map[string]Pending
		if p.pending != nil {
			pending = p.pending()
		}
		width, _, err := term.GetSize(int(p.w.Fd()))
		if err != nil || width <= 0 {
			width = 100 // a terminal that does not say its width
		}
		p.mu.Lock()
		line := progressLine(named(p.done, p.labels), named(pending, p.labels), width-30) // room for the spinner and the clock
		p.mu.Unlock()
		p.bar.Describe(line)
		select {
		case <-tick.C:
		case <-p.stop:
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
