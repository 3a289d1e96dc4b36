package politeness

// This file decides when a door tells its user that too many requests are waiting.

import (
	"fmt"
	"sync"

	"github.com/politecrawl/etiquette/politeness/events"
)

// backlogNotice is the number of a door's requests waiting to reach the wire — for robots.txt,
// for their origin's turn or for a Retry-After — above which the door emits a Notice (reason
// "backlog"). With Colly's Async mode every Visit is a goroutine that waits inside the door, so
// a scraper that visits faster than its origins allow piles them up without bound.
const backlogNotice = 1000

// backlog counts waiting requests and emits the notice once per crossing of backlogNotice: after
// a notice it stays silent until the backlog has fallen to three quarters of the threshold, so a
// count that hovers around it does not emit per request.
type backlog struct {
	sink events.Sink

	mu      sync.Mutex
	waiting int
	warned  bool
}

func (b *backlog) add(delta int) {
	b.mu.Lock()
	b.waiting += delta
	n := b.waiting
	notify := !b.warned && n > backlogNotice
	if notify {
		b.warned = true
	} else if b.warned && n <= backlogNotice*3/4 {
		b.warned = false
	}
	b.mu.Unlock()
	if notify {
		b.sink.Emit(events.Event{Type: events.Notice, Reason: "backlog",
			Detail: fmt.Sprintf("%d requests of this door are waiting for their origin's turn (more than %d); "+
				"with an Async Colly collector each one holds a goroutine: bound the requests in flight, e.g. with colly/queue", n, backlogNotice)})
	}
}
