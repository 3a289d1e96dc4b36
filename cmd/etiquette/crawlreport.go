package main

// This file decides where a crawl's figures go: a report directory (--report DIR), a report kept
// in memory for the caller (demo), or nowhere; and the progress line on a terminal.

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/report"
)

// crawlReport collects one crawl's figures. With neither dir nor rec it collects nothing, so a
// crawl without --report keeps no per-origin timeline in memory.
type crawlReport struct {
	dir   *report.Dir
	rec   *report.Recorder
	found report.Found
}

// newCrawlReport starts the report o asks for, measured against the policy's budget. A report
// directory that cannot be created is a usage error naming --report.
func newCrawlReport(o crawlOptions, p politeness.Policy) (*crawlReport, error) {
	ro := o.reportNames
	ro.Rate, ro.AuthorizedRates = p.Rate, p.AuthorizedRates
	switch {
	case o.reportDir != "":
		d, err := report.Create(o.reportDir, ro)
		if err != nil {
			return nil, usagef("--report %s: %v", o.reportDir, err)
		}
		return &crawlReport{dir: d}, nil
	case o.wantReport:
		return &crawlReport{rec: report.NewRecorder(ro)}, nil
	}
	return &crawlReport{}, nil
}

// foundOrNil is the counter the crawl's lines feed, nil when there is no report.
func (r *crawlReport) foundOrNil() *report.Found {
	if r.dir == nil && r.rec == nil {
		return nil
	}
	return &r.found
}

func (r *crawlReport) record(e events.Event) {
	switch {
	case r.dir != nil:
		r.dir.Record(e)
	case r.rec != nil:
		r.rec.Record(e)
	}
}

// close finishes the report: for a directory, events.jsonl and index.html. It returns nil when
// there is no report, and the report with the error when a file could not be written.
func (r *crawlReport) close() (*report.Report, error) {
	switch {
	case r.dir != nil:
		return r.dir.Close(&r.found)
	case r.rec != nil:
		return r.rec.Report(&r.found), nil
	}
	return nil, nil
}

// startProgress draws the crawl's progress line on stderr when stderr is a terminal (and nothing
// otherwise, tests included), with the frontier's queued and in-progress counts per origin, the
// origins named by labels (the demo's) where they have one.
func startProgress(e env, f *frontier.Frontier, labels map[string]string) *report.Progress {
	p := report.NewProgress(e.stderr, func() map[string]report.Pending {
		m := map[string]report.Pending{}
		for _, st := range f.Stats() {
			m[st.Origin] = report.Pending{Queued: st.Queued, Waiting: st.InProgress}
		}
		return m
	})
	p.Name(labels)
	return p
}

// showReport writes r as text to w and, when it was also written to dir (--report), says on
// stderr where its page is.
func showReport(e env, w io.Writer, r *report.Report, dir string) error {
	err := r.WriteText(w)
	if dir != "" {
		fmt.Fprintf(e.stderr, "etiquette: report written to %s\n", filepath.Join(dir, report.HTMLFile))
	}
	return err
}
