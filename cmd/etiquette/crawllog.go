package main

// This file decides where a crawl's log records go: to stderr, warnings and errors only, and
// while the progress line is drawn, above it rather than onto it.

import (
	"io"
	"log/slog"
	"sync"
)

// crawlLog is a crawl's log: every part the crawl builds (its clock, the door, the frontier, the
// crawler, the Redis store) logs through it, so that no record reaches stderr around it.
type crawlLog struct {
	mu    sync.Mutex
	w     io.Writer  // stderr, or the progress line's writer while it is drawn
	level slog.Level // the least level written
}

// newCrawlLog returns a log writing warnings and errors to stderr.
func newCrawlLog(stderr io.Writer) *crawlLog { return &crawlLog{w: stderr, level: slog.LevelWarn} }

// newCrawlLogAt returns a log writing records of level and above to stderr (demo -v: debug).
func newCrawlLogAt(stderr io.Writer, level slog.Level) *crawlLog {
	return &crawlLog{w: stderr, level: level}
}

// Write writes one record to the current destination.
func (l *crawlLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// through sends the records to w until the returned function is called, which sends them back
// to where they went before.
func (l *crawlLog) through(w io.Writer) (restore func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	before := l.w
	l.w = w
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.w = before
	}
}

// logger is the crawl's slog logger: warnings and errors (a host given up, a queue full, a body
// cut), as a library logs by default; the per-URL outcomes are the JSON lines on stdout.
func (l *crawlLog) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: l.level}))
}
