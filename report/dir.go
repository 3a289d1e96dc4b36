// This file decides what a report directory holds and when each file is written: events.jsonl
// while the crawl runs, index.html when it ends.

package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/politecrawl/etiquette/politeness/events"
)

// The files of a report directory.
const (
	EventsFile = "events.jsonl"
	HTMLFile   = "index.html"
)

// Dir is a report directory being written: DIR/events.jsonl grows as the crawl runs (one event
// a line, flushed at Close) and DIR/index.html is written by Close. Subscribe Record to the
// door's bus. Memory stays bounded as for a [Recorder]; the events are not kept in memory. Safe
// for concurrent use; make one with [Create].
type Dir struct {
	path  string
	jsonl *JSONLWriter
	rec   *Recorder
}

// Create makes dir (and its parents) if needed and starts DIR/events.jsonl, replacing an
// earlier one.
func Create(dir string, o Options) (*Dir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	w, err := CreateJSONL(filepath.Join(dir, EventsFile))
	if err != nil {
		return nil, err
	}
	return &Dir{path: dir, jsonl: w, rec: NewRecorder(o)}, nil
}

// Record writes e to events.jsonl and adds it to the figures.
func (d *Dir) Record(e events.Event) {
	d.jsonl.Emit(e)
	d.rec.Record(e)
}

// Close finishes events.jsonl, writes index.html from the figures, with the URLs found counted
// by found (nil: none), and returns the report, also when a file could not be written.
func (d *Dir) Close(found *Found) (*Report, error) {
	rep := d.rec.Report(found)
	errJSONL := d.jsonl.Close()
	f, err := os.Create(filepath.Join(d.path, HTMLFile))
	if err != nil {
		return rep, errors.Join(errJSONL, fmt.Errorf("report: %w", err))
	}
	errHTML := rep.WriteHTML(f)
	if err := f.Close(); errHTML == nil && err != nil {
		errHTML = fmt.Errorf("report: %w", err)
	}
	return rep, errors.Join(errJSONL, errHTML)
}
