// This file decides how an event is written as one JSON line of events.jsonl, and how such a
// line is read back.

package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"time"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// line is an events.Event as one JSON object of events.jsonl. The package documentation lists
// the fields for readers of the file; keep the two in step.
type line struct {
	Time      string  `json:"time"`
	Type      string  `json:"type"`
	Origin    string  `json:"origin,omitempty"`
	URL       string  `json:"url,omitempty"`
	Kind      string  `json:"kind,omitempty"`
	Method    string  `json:"method,omitempty"`
	Status    int     `json:"status,omitempty"`
	Cache     string  `json:"cache,omitempty"`
	Bytes     int64   `json:"bytes,omitempty"`
	Truncated bool    `json:"truncated,omitempty"`
	Reason    string  `json:"reason,omitempty"`
	Detail    string  `json:"detail,omitempty"`
	WaitMS    float64 `json:"wait_ms,omitempty"`
	Until     string  `json:"until,omitempty"`
	Error     string  `json:"error,omitempty"`
}

// timeLayout is RFC 3339 with nanoseconds, always in UTC.
const timeLayout = time.RFC3339Nano

func encode(e events.Event) ([]byte, error) {
	if y := e.Time.UTC().Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("event time %v is outside the years 0-9999 that RFC 3339 can write", e.Time)
	}
	l := line{Time: e.Time.UTC().Format(timeLayout), Type: string(e.Type), Origin: e.Origin, URL: e.URL,
		Kind: string(e.Kind), Method: e.Method, Status: e.Status, Cache: e.Cache, Bytes: e.Bytes,
		Truncated: e.Truncated, Reason: e.Reason, Detail: e.Detail, WaitMS: float64(e.Wait) / float64(time.Millisecond)}
	if !e.Until.IsZero() {
		if y := e.Until.UTC().Year(); y < 0 || y > 9999 {
			return nil, fmt.Errorf("event until %v is outside the years 0-9999 that RFC 3339 can write", e.Until)
		}
		l.Until = e.Until.UTC().Format(timeLayout)
	}
	if e.Err != nil {
		l.Error = e.Err.Error()
	}
	b, err := json.Marshal(l)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Errors of reading events.jsonl; a *[LineError] wraps one of them.
var (
	// ErrMalformed: the line is not a JSON object with the fields of an event, or a field has a
	// value out of its range (a time that is not RFC 3339, a wait beyond ±292 years).
	ErrMalformed = errors.New("not an event")
	// ErrLineTooLong: the line is longer than MaxLine bytes; it was skipped unread.
	ErrLineTooLong = errors.New("line longer than report.MaxLine bytes")
)

// MaxLine bounds one line of events.jsonl, so that reading a damaged file cannot take unbounded
// memory. An event's longest field is Detail, an error text of a few hundred bytes.
const MaxLine = 1 << 20

// LineError is a line of events.jsonl that could not be read as an event. Reading may go on
// after it with the next line.
type LineError struct {
	Line int   // 1-based
	Err  error // wraps ErrMalformed or ErrLineTooLong
}

func (e *LineError) Error() string {
	return fmt.Sprintf("events.jsonl line %d: %v", e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

func decode(b []byte) (events.Event, error) {
	var l line
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&l); err != nil {
		return events.Event{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if dec.More() {
		return events.Event{}, fmt.Errorf("%w: more than one JSON value on the line", ErrMalformed)
	}
	if l.Type == "" {
		return events.Event{}, fmt.Errorf("%w: no \"type\"", ErrMalformed)
	}
	at, err := time.Parse(timeLayout, l.Time)
	if err != nil {
		return events.Event{}, fmt.Errorf("%w: \"time\" %q is not an RFC 3339 time", ErrMalformed, l.Time)
	}
	ns := math.Round(l.WaitMS * float64(time.Millisecond))
	if ns >= math.MaxInt64 || ns < math.MinInt64 {
		return events.Event{}, fmt.Errorf("%w: \"wait_ms\" %g is beyond what a Go duration holds", ErrMalformed, l.WaitMS)
	}
	e := events.Event{Time: at, Type: events.Type(l.Type), URL: l.URL, Origin: l.Origin, Kind: kind.Kind(l.Kind),
		Method: l.Method, Status: l.Status, Cache: l.Cache, Bytes: l.Bytes, Truncated: l.Truncated, Reason: l.Reason,
		Detail: l.Detail, Wait: time.Duration(ns)}
	if l.Until != "" {
		if e.Until, err = time.Parse(timeLayout, l.Until); err != nil {
			return events.Event{}, fmt.Errorf("%w: \"until\" %q is not an RFC 3339 time", ErrMalformed, l.Until)
		}
	}
	if l.Error != "" {
		e.Err = errors.New(l.Error)
	}
	return e, nil
}

// JSONLWriter writes a crawl's events to events.jsonl as they happen, one JSON object a line.
// Subscribe its Emit to the door's bus (it is also an events.Sink). It holds only a 64 KiB
// buffer, however long the crawl; each Emit encodes and writes synchronously, so the writer
// should be a file, not something that can stall. Safe for concurrent use; the zero value is
// not usable.
type JSONLWriter struct {
	mu      sync.Mutex
	w       *bufio.Writer
	closer  io.Closer // the file CreateJSONL opened; nil for NewJSONLWriter
	err     error     // the first error; later events are counted, not written
	lost    int
	written int
	closed  bool
}

// NewJSONLWriter writes events to w. Close flushes it; it does not close w.
func NewJSONLWriter(w io.Writer) *JSONLWriter {
	return &JSONLWriter{w: bufio.NewWriterSize(w, 64<<10)}
}

// CreateJSONL creates (or truncates) the file at path and writes events to it; Close closes it.
func CreateJSONL(path string) (*JSONLWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	w := NewJSONLWriter(f)
	w.closer = f
	return w, nil
}

// Emit writes e as one line. An event that cannot be written — after a write error, after
// Close, or one whose time RFC 3339 cannot express — is counted, and Close reports it.
func (w *JSONLWriter) Emit(e events.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil || w.closed {
		w.lost++
		return
	}
	b, err := encode(e)
	if err == nil {
		_, err = w.w.Write(b)
	}
	if err != nil {
		w.err = err
		w.lost++
		return
	}
	w.written++
}

// Written is the number of events written so far.
func (w *JSONLWriter) Written() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.written
}

// Close flushes the buffer and, for a writer made by CreateJSONL, closes the file. It returns
// the first error met, with the number of events that were not written because of it.
func (w *JSONLWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return w.result()
	}
	w.closed = true
	if err := w.w.Flush(); err != nil && w.err == nil {
		w.err = err
	}
	if w.closer != nil {
		if err := w.closer.Close(); err != nil && w.err == nil {
			w.err = err
		}
	}
	return w.result()
}

func (w *JSONLWriter) result() error {
	switch {
	case w.err != nil:
		return fmt.Errorf("report: events.jsonl: %d events not written: %w", w.lost, w.err)
	case w.lost > 0:
		return fmt.Errorf("report: events.jsonl: %d events arrived after Close and were not written", w.lost)
	}
	return nil
}

// JSONLReader reads events.jsonl one event at a time, holding one line (at most MaxLine bytes)
// in memory. Blank lines are skipped; unknown fields are ignored, so a file from a later version
// still reads. The zero value is not usable.
type JSONLReader struct {
	r    *bufio.Reader
	line int
}

// NewJSONLReader reads events from r.
func NewJSONLReader(r io.Reader) *JSONLReader {
	return &JSONLReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next event, io.EOF after the last one, a *[LineError] for a line that is not
// an event (call Next again to go on with the next line), or the underlying reader's error.
func (r *JSONLReader) Next() (events.Event, error) {
	for {
		b, tooLong, err := r.readLine()
		if err != nil {
			return events.Event{}, err
		}
		r.line++
		if tooLong {
			return events.Event{}, &LineError{Line: r.line, Err: ErrLineTooLong}
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		e, derr := decode(b)
		if derr != nil {
			return events.Event{}, &LineError{Line: r.line, Err: derr}
		}
		return e, nil
	}
}

// readLine returns the next line without its end. A line longer than MaxLine is read to its
// end and discarded. err is io.EOF only when no line is left.
func (r *JSONLReader) readLine() (b []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := r.r.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > MaxLine+1 { // +1: the line end
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case err == nil:
			return bytes.TrimRight(buf, "\r\n"), tooLong, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && (len(buf) > 0 || tooLong):
			return buf, tooLong, nil
		default:
			return nil, false, err
		}
	}
}
