package report_test

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/report"
)

// sameEvent compares events as the file keeps them: times by instant, errors by text.
func sameEvent(a, b events.Event) bool {
	errText := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	return a.Time.Equal(b.Time) && a.Until.Equal(b.Until) && errText(a.Err) == errText(b.Err) &&
		a.Type == b.Type && a.URL == b.URL && a.Origin == b.Origin && a.Kind == b.Kind && a.Method == b.Method &&
		a.Status == b.Status && a.Cache == b.Cache && a.Bytes == b.Bytes && a.Truncated == b.Truncated &&
		a.Reason == b.Reason && a.Detail == b.Detail && a.Wait == b.Wait
}

func everyField() events.Event {
	return events.Event{Time: t0.Add(123456789 * time.Nanosecond).In(time.FixedZone("CET", 3600)), Type: events.Paused,
		URL: "http://a.test/p?q=\"x\"\n", Origin: "a.test", Kind: kind.Feed, Method: "HEAD", Status: 429, Cache: "stale",
		Bytes: 1 << 40, Truncated: true, Reason: "retry-after", Detail: "ünïcode ✓", Wait: 1500*time.Millisecond + 7,
		Until: t0.Add(2 * time.Second), Err: errors.New("boom")}
}

func TestJSONLRoundTrips(t *testing.T) {
	evs := []events.Event{
		everyField(),
		{Time: t0, Type: events.Admitted},
		{Time: t0, Type: "a-type-from-a-later-version", Wait: -3 * time.Millisecond},
		{Time: t0, Type: events.Waited, Wait: 26 * 24 * time.Hour},
	}
	var buf bytes.Buffer
	w := report.NewJSONLWriter(&buf)
	for _, e := range evs {
		w.Emit(e)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != len(evs) || w.Written() != len(evs) {
		t.Fatalf("%d lines, %d written, want %d:\n%s", n, w.Written(), len(evs), buf.String())
	}
	got, err := readJSONL(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(evs) {
		t.Fatalf("read %d events, want %d", len(got), len(evs))
	}
	for i := range evs {
		if !sameEvent(got[i], evs[i]) {
			t.Errorf("event %d:\n got %+v\nwant %+v", i, got[i], evs[i])
		}
	}
}

func TestJSONLFieldNames(t *testing.T) {
	var buf bytes.Buffer
	w := report.NewJSONLWriter(&buf)
	w.Emit(everyField())
	w.Emit(events.Event{Time: t0, Type: events.Admitted, URL: "http://a.test/"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	first, second, _ := strings.Cut(buf.String(), "\n")
	want(t, "every field", first, `{"time":"2026-01-15T09:00:00.123456789Z","type":"paused","origin":"a.test","url":"http://a.test/p?q=\"x\"\n",`+
		`"kind":"feed","method":"HEAD","status":429,"cache":"stale","bytes":1099511627776,"truncated":true,"reason":"retry-after",`+
		`"detail":"ünïcode ✓","wait_ms":1500.000007,"until":"2026-01-15T09:00:02Z","error":"boom"}`)
	want(t, "zero fields left out", second, `{"time":"2026-01-15T09:00:00Z","type":"admitted","url":"http://a.test/"}`+"\n")
}

func TestJSONLReaderBadLines(t *testing.T) {
	long := `{"time":"2026-01-15T09:00:00Z","type":"notice","detail":"` + strings.Repeat("x", report.MaxLine) + `"}`
	tests := []struct {
		name string
		line string
		want error
	}{
		{"not JSON", "hello", report.ErrMalformed},
		{"no type", `{"time":"2026-01-15T09:00:00Z"}`, report.ErrMalformed},
		{"no time", `{"type":"admitted"}`, report.ErrMalformed},
		{"a time that is not RFC 3339", `{"time":"yesterday","type":"admitted"}`, report.ErrMalformed},
		{"a bad until", `{"time":"2026-01-15T09:00:00Z","type":"paused","until":"soon"}`, report.ErrMalformed},
		{"a wait no duration holds", `{"time":"2026-01-15T09:00:00Z","type":"waited","wait_ms":1e300}`, report.ErrMalformed},
		{"a field of the wrong type", `{"time":"2026-01-15T09:00:00Z","type":"response","status":"200"}`, report.ErrMalformed},
		{"two objects on a line", `{"time":"2026-01-15T09:00:00Z","type":"admitted"}{}`, report.ErrMalformed},
		{"an array", `[1]`, report.ErrMalformed},
		{"a line longer than MaxLine", long, report.ErrLineTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			good := `{"time":"2026-01-15T09:00:00Z","type":"admitted"}`
			r := report.NewJSONLReader(strings.NewReader(good + "\n\n" + tt.line + "\r\n" + good))
			if _, err := r.Next(); err != nil {
				t.Fatalf("first line: %v", err)
			}
			_, err := r.Next()
			var le *report.LineError
			if !errors.As(err, &le) || le.Line != 3 || !errors.Is(err, tt.want) {
				t.Fatalf("bad line: %v, want a LineError on line 3 wrapping %v", err, tt.want)
			}
			if e, err := r.Next(); err != nil || e.Type != events.Admitted {
				t.Fatalf("the line after the bad one: %+v, %v; reading should go on", e, err)
			}
			if _, err := r.Next(); err != io.EOF {
				t.Fatalf("end: %v, want io.EOF", err)
			}
			evs, err := readJSONL(strings.NewReader(good + "\n" + tt.line + "\n" + good))
			if len(evs) != 1 || !errors.As(err, &le) || le.Line != 2 {
				t.Errorf("readJSONL: %d events, %v; want the 1 event before the bad line 2", len(evs), err)
			}
		})
	}
}

func TestJSONLWriterReportsWhatItCouldNotWrite(t *testing.T) {
	t.Run("an event time RFC 3339 cannot express", func(t *testing.T) {
		var buf bytes.Buffer
		w := report.NewJSONLWriter(&buf)
		w.Emit(events.Event{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Type: events.Admitted})
		w.Emit(events.Event{Time: t0, Type: events.Admitted})
		if err := w.Close(); err == nil || !strings.Contains(err.Error(), "2 events not written") {
			t.Errorf("Close: %v, want the 2 events not written", err)
		}
	})
	t.Run("a writer that fails", func(t *testing.T) {
		w := report.NewJSONLWriter(failingWriter{})
		for range 3 {
			w.Emit(everyField())
		}
		if err := w.Close(); !errors.Is(err, errDiskFull) {
			t.Errorf("Close: %v, want the writer's error", err)
		}
	})
	t.Run("events after Close", func(t *testing.T) {
		w := report.NewJSONLWriter(io.Discard)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		w.Emit(everyField())
		if err := w.Close(); err == nil || !strings.Contains(err.Error(), "after Close") {
			t.Errorf("second Close: %v, want the event that came after Close", err)
		}
	})
}

var errDiskFull = errors.New("disk full")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskFull }

func FuzzJSONLReader(f *testing.F) {
	f.Add([]byte(`{"time":"2026-01-15T09:00:00.5Z","type":"waited","wait_ms":333.5,"reason":"rate"}` + "\n"))
	f.Add([]byte(`{"time":"2026-01-15T09:00:00Z","type":"paused","until":"2026-01-15T09:00:02+01:00","error":"x"}`))
	f.Add([]byte("\n\r\n{}\n[]\nnull\n"))
	f.Add([]byte(`{"time":"2026-01-15T09:00:00Z","type":"x","wait_ms":-9.2e12}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := report.NewJSONLReader(bytes.NewReader(data))
		for range bytes.Count(data, []byte("\n")) + 2 {
			e, err := r.Next()
			if err == io.EOF {
				return
			}
			var le *report.LineError
			if err != nil {
				if !errors.As(err, &le) || !(errors.Is(err, report.ErrMalformed) || errors.Is(err, report.ErrLineTooLong)) {
					t.Fatalf("an error that is not a LineError: %v", err)
				}
				continue
			}
			// What was read writes back, and reads back as the same event.
			var buf bytes.Buffer
			w := report.NewJSONLWriter(&buf)
			w.Emit(e)
			if err := w.Close(); err != nil {
				if y := e.Time.UTC().Year(); y >= 0 && y <= 9999 {
					t.Fatalf("an event read could not be written: %v", err)
				}
				continue
			}
			again, err := readJSONL(&buf)
			if err != nil || len(again) != 1 {
				t.Fatalf("re-reading %q: %v", buf.String(), err)
			}
			exact := again[0]
			if d := math.Abs(float64(exact.Wait - e.Wait)); d > math.Abs(float64(e.Wait))*0x1p-50+1 {
				t.Fatalf("wait %v read back as %v", e.Wait, exact.Wait)
			}
			exact.Wait = e.Wait
			if !sameEvent(exact, e) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", exact, e)
			}
		}
		t.Fatal("more events than lines")
	})
}
