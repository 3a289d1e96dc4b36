package politeness

import (
	"net/http"
	"sync"

	"github.com/politecrawl/etiquette/politeness/events"
)

// recorder is the bottom of a layer under test: it keeps the request it was handed and answers
// with answer (200 and an empty body when nil).
type recorder struct {
	mu     sync.Mutex
	got    []*http.Request
	answer func(*http.Request) *http.Response
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.got = append(r.got, req)
	r.mu.Unlock()
	if r.answer != nil {
		return r.answer(req), nil
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
}

func (r *recorder) last() *http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) == 0 {
		return nil
	}
	return r.got[len(r.got)-1]
}

// eventLog is a sink that keeps every event.
type eventLog struct {
	mu sync.Mutex
	ev []events.Event
}

func (l *eventLog) Emit(e events.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ev = append(l.ev, e)
}

// of returns the events of type t, in order.
func (l *eventLog) of(t events.Type) []events.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []events.Event
	for _, e := range l.ev {
		if e.Type == t {
			out = append(out, e)
		}
	}
	return out
}
