// Package dropin_test measures the drop-in contract of extensions.Polite on Colly's own
// programs: each of the 14 examples shipped with Colly v2.3.0 and 19 patterns from Colly's
// documentation, rewritten to run against a loopback recording site, is run once bare and once
// with the one added line, and the two runs are compared. A difference the user was not told
// about — no error returned, no OnError, no log record at the level slog.Default shows — is a
// silent change of the user's program, which the contract forbids.
//
// Run it with: go test -count=1 -v -run TestDropInMatrix ./extensions/dropin/
package dropin_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// knownSilent lists the programs whose polite run differs from the bare one without a message,
// and what differs: none today. Each entry would be a breach of the contract waiting for its fix;
// the matrix fails when a program is silent and not listed, and when a listed program is no
// longer silent (so a fixed row cannot hide a later regression): empty the entry with the fix.
var knownSilent = map[string]string{}

// program is one Colly program: a name as in the table, whether it is one of Colly's examples,
// and its body, which builds what it needs of the site through r and calls r.install where the
// one line goes.
type program struct {
	name    string
	example bool
	// unordered: the program's output order depends on scheduling (Async, queues), so lines
	// are compared as a sorted multiset.
	unordered bool
	// about, when set, is what a message must mention to explain a difference: the setting at
	// stake (`(?i)timeout`). A record about something else — a slow answer noticed — does not
	// tell the user that their timeout was dropped. Unset: any new message counts. Messages
	// quote URLs, so the words must not be in the program's paths.
	about string
	body  func(r *run)
}

// politeIdentity is the identity of every polite run: a valid generic one.
var politeIdentity = identity.Identity{Profile: identity.Generic, Token: "ExampleBot", Version: "1.0",
	InfoURL: "https://example.org/bot", Contact: "bot@example.org"}

// defaultLog collects what anything in the process logs through slog.Default: the door logs
// through Policy.Logger, so a record here was sent past it. Records naming a run's origin are
// added to that run's messages.
var defaultLog = &lockedBuffer{}

func TestMain(m *testing.M) {
	// The door's default disk cache lives in the user cache directory; point it at a temporary
	// one so no test writes under $HOME, and so that a program's restart finds what its first
	// run stored there, as a real restart would.
	dir, err := os.MkdirTemp("", "dropin-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	slog.SetDefault(slog.New(slog.NewTextHandler(defaultLog, &slog.HandlerOptions{ReplaceAttr: dropTime})))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// dropTime leaves out of a record the attributes that change from run to run — its time, and
// measured durations and instants — so two runs' records compare and the table reads the same
// from one run to the next.
func dropTime(groups []string, a slog.Attr) slog.Attr {
	switch a.Key {
	case slog.TimeKey, "until", "wait", "duration", "response_time", "interval":
		return slog.Attr{}
	}
	return a
}

// TestDropInMatrix runs every program bare and with Polite, in parallel (each run on a site of
// its own, so every origin has its own budget), and prints the table.
func TestDropInMatrix(t *testing.T) {
	rows := make([]row, len(programs))
	start := time.Now()
	t.Run("programs", func(t *testing.T) {
		for i, p := range programs {
			t.Run(p.name, func(t *testing.T) {
				t.Parallel()
				rows[i] = row{prog: p, bare: execute(t, p, false), polite: execute(t, p, true)}
				if rows[i].bare == nil || rows[i].polite == nil {
					rows[i] = row{}
				}
			})
		}
	})
	unclaimed := attributeDefaultLog(rows)
	var table strings.Builder
	table.WriteString("| program | bare | with Polite | message seen |\n|---|---|---|---|\n")
	compared := 0
	for _, r := range rows {
		if r.bare == nil || r.polite == nil {
			continue // the subtest failed or was not run
		}
		compared++
		v := r.verdict()
		table.WriteString(v.markdown(r.prog))
		known, listed := knownSilent[r.prog.name]
		switch {
		case v.silent && !listed:
			t.Errorf("%s: the polite run differs from the bare one and the user saw no message:\n%s", r.prog.name, v.detail)
		case !v.silent && listed:
			t.Errorf("%s is listed in knownSilent (%q) but is no longer silent (%s): remove it from the list", r.prog.name, known, v.polite)
		}
	}
	if len(unclaimed) > 0 {
		t.Logf("logged through slog.Default, naming no run's origin:\n%s", strings.Join(unclaimed, "\n"))
	}
	t.Logf("Colly drop-in matrix (%d of %d programs, %s):\n%s", compared, len(programs), time.Since(start).Round(time.Second), table.String())
	if out := os.Getenv("DROPIN_TABLE"); out != "" {
		if err := os.WriteFile(out, []byte(table.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// runLimit bounds one run: a program that hangs is reported, and its site closed so it ends.
const runLimit = 60 * time.Second

// execute runs p once, bare or polite, on a site of its own, and returns what it did.
func execute(t *testing.T, p program, polite bool) *outcome {
	t.Helper()
	site := etiquettetest.NewSite()
	defer site.Close()
	r := &run{t: t, site: site, polite: polite, tmp: t.TempDir(), names: map[string]string{}}
	r.log = &lockedBuffer{}
	r.newProcess()
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.body(r)
	}()
	select {
	case <-done:
	case <-time.After(runLimit):
		t.Errorf("%s (polite=%v) still running after %s; closing its site", p.name, polite, runLimit)
		site.Close()
		select {
		case <-done:
		case <-time.After(runLimit / 4):
			// Still waiting, e.g. for the door's clock: leave it, and the row out of the table.
			t.Errorf("%s (polite=%v) did not end after its site closed", p.name, polite)
			return nil
		}
	}
	return r.outcome(p.unordered)
}

// run is one execution of a program: the site it talks to, what it printed and what the user
// was told. A program that restarts (a second process reading what the first one cached) calls
// newProcess in between.
type run struct {
	t      *testing.T
	site   *etiquettetest.Site
	polite bool
	tmp    string // the program's working directory: its CacheDir, saved files

	mu       sync.Mutex
	names    map[string]string // origin or proxy URL → {name}
	addrs    []string          // host:port of every origin, for attributing default-log records
	lines    []string
	messages []string
	mark     *etiquettetest.Mark // set by since: only requests after it count

	log    *lockedBuffer // the polite runs' Policy.Logger, at slog.Default's level
	policy politeness.Policy
}

// origin starts a new origin of the site, known in the table as {name}.
func (r *run) origin(name string) *etiquettetest.Origin {
	o := r.site.NewOrigin()
	r.name(o.URL, name)
	return o
}

// name makes every later mention of url read {name} in output and messages.
func (r *run) name(url, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names[url] = "{" + name + "}"
	r.names[strings.TrimPrefix(url, "http://")] = "{" + name + "}"
	r.addrs = append(r.addrs, strings.TrimPrefix(url, "http://"))
}

// newProcess gives the next collectors a fresh process's state: their own clock and robots.txt
// keeper. The door's disk cache persists, as it does across real restarts.
func (r *run) newProcess() {
	// What slog.Default shows: Info and above.
	logger := slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{ReplaceAttr: dropTime}))
	clock, err := hostclock.NewLocal(hostclock.Config{Logger: logger})
	r.must(err)
	r.policy = politeness.Policy{Identity: politeIdentity, Clock: clock, Robots: robots.NewKeeper(robots.Options{}), Logger: logger}
}

// must ends the program when err is not nil, failing the test. The program runs on a goroutine
// of its own, where t.Fatal may not be called; the run's outcome is then what it did so far.
func (r *run) must(err error) {
	if err != nil {
		r.t.Errorf("setting up the program: %v", err)
		runtime.Goexit()
	}
}

// install is the one line added to the program: extensions.Polite with the run's policy in a
// polite run, nothing in a bare one. Polite's error is what the user sees.
func (r *run) install(c *colly.Collector) {
	if !r.polite {
		return
	}
	if err := extensions.Polite(c, r.policy); err != nil {
		r.saw(fmt.Errorf("extensions.Polite: %w", err))
	}
}

// printf is the program's output.
func (r *run) printf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

// saw records an error the program showed its user (returned by Visit, Post, Wait, or passed to
// OnError). nil is ignored.
func (r *run) saw(err error) {
	if err == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.messages = append(r.messages, err.Error())
}

// since makes only the requests from now on count as the program's visits, e.g. those of the
// second process of a restart.
func (r *run) since() {
	m := r.site.Mark()
	r.mu.Lock()
	r.mark = &m
	r.mu.Unlock()
}

// outcome is what a run did, with origin URLs replaced by their names.
type outcome struct {
	lines     []string            // what the program printed
	visits    []string            // "METHOD target status" of every request but robots.txt, sorted
	messages  []string            // errors and log records the user saw
	addrs     []string            // host:port of the run's origins, to attribute default-log records
	normalize func(string) string // the run's names for its addresses
}

func (r *run) outcome(unordered bool) *outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	reqs := r.site.Requests()
	if r.mark != nil {
		reqs = r.site.Since(*r.mark)
	}
	o := &outcome{addrs: r.addrs, normalize: r.normalize}
	for _, l := range r.lines {
		o.lines = append(o.lines, r.normalizeLocked(l))
	}
	if unordered {
		slices.Sort(o.lines)
	}
	for _, q := range reqs {
		if q.Path() == "/robots.txt" {
			continue // a polite run reads it first; what a program asks for is the rest
		}
		o.visits = append(o.visits, fmt.Sprintf("%s %s%s %d", q.Method, r.normalizeLocked(q.Origin), q.Target, q.Status))
	}
	slices.Sort(o.visits)
	for _, m := range r.messages {
		o.messages = append(o.messages, r.normalizeLocked(m))
	}
	for _, l := range strings.Split(strings.TrimSpace(r.log.String()), "\n") {
		if l != "" {
			o.messages = append(o.messages, r.normalizeLocked(l))
		}
	}
	return o
}

// normalize replaces origin and proxy addresses by their names, longest first, so a bare and a
// polite run on different ports read alike.
func (r *run) normalize(s string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.normalizeLocked(s)
}

func (r *run) normalizeLocked(s string) string {
	keys := make([]string, 0, len(r.names))
	for k := range r.names {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return len(b) - len(a) })
	for _, k := range keys {
		s = strings.ReplaceAll(s, k, r.names[k])
	}
	return s
}

// row is one program's two runs.
type row struct {
	prog         program
	bare, polite *outcome
}

// attributeDefaultLog adds each record logged through slog.Default since the last call to the
// polite run whose origin it names, and returns the records that name none.
func attributeDefaultLog(rows []row) (unclaimed []string) {
	text := strings.TrimSpace(defaultLog.take())
	if text == "" {
		return nil
	}
	for _, l := range strings.Split(text, "\n") {
		claimed := false
		for _, r := range rows {
			if r.polite == nil || !slices.ContainsFunc(r.polite.addrs, func(a string) bool { return strings.Contains(l, a) }) {
				continue
			}
			r.polite.messages = append(r.polite.messages, "slog.Default: "+r.polite.normalize(l))
			claimed = true
		}
		if !claimed {
			unclaimed = append(unclaimed, l)
		}
	}
	return unclaimed
}

// lockedBuffer is a bytes.Buffer for several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// take returns what was written and empties the buffer.
func (l *lockedBuffer) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	l.b.Reset()
	return s
}

var _ io.Writer = (*lockedBuffer)(nil)
