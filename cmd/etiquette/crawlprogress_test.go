package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/politecrawl/etiquette/etiquettetest"
)

// terminal is the other side of a pseudo-terminal the CLI writes its stderr to, recording what
// reaches it.
type terminal struct {
	mu    sync.Mutex
	raw   bytes.Buffer
	seen  chan struct{} // closed when the raw output first contains watch
	done  chan struct{} // closed when everything written has been read
	close func()        // closes the terminal side, once
}

// output closes the terminal side and returns all that was written to it.
func (term *terminal) output() string {
	term.close()
	<-term.done
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.raw.String()
}

// openTerminal opens a 100-column pseudo-terminal and reads its output until the test ends. It
// closes seen once watch has appeared in the output.
func openTerminal(t *testing.T, watch string) (tty io.Writer, term *terminal) {
	t.Helper()
	ptm, pts, err := pty.Open()
	if errors.Is(err, pty.ErrUnsupported) {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := pty.Setsize(pts, &pty.Winsize{Rows: 40, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	term = &terminal{seen: make(chan struct{}), done: make(chan struct{}), close: sync.OnceFunc(func() { pts.Close() })}
	go func() {
		defer close(term.done)
		buf := make([]byte, 4096)
		once := sync.Once{}
		for {
			n, err := ptm.Read(buf)
			term.mu.Lock()
			term.raw.Write(buf[:n])
			if strings.Contains(term.raw.String(), watch) {
				once.Do(func() { close(term.seen) })
			}
			term.mu.Unlock()
			if err != nil {
				return // EIO once the terminal side is closed
			}
		}
	}()
	t.Cleanup(func() { term.output(); ptm.Close() })
	return pts, term
}

// screen is what a terminal shows of raw output: each line as left by carriage returns
// overwriting it ("\r" goes back to the line's start, "\n" ends it), one entry per line.
func screen(raw string) []string {
	var lines []string
	var cur []rune
	col := 0
	for _, r := range raw {
		switch r {
		case '\r':
			col = 0
		case '\n':
			lines = append(lines, strings.TrimRight(string(cur), " "))
			cur, col = nil, 0
		default:
			if col < len(cur) {
				cur[col] = r
			} else {
				cur = append(cur, r)
			}
			col++
		}
	}
	return append(lines, strings.TrimRight(string(cur), " "))
}

// TestCrawlLogsAboveTheProgressLine: on a terminal, a warning the crawl logs while its progress
// line is drawn gets a line of its own on the crawl's stderr — not the tail of the progress line,
// not bits of the line after it — and the progress line is drawn again below it.
func TestCrawlLogsAboveTheProgressLine(t *testing.T) {
	release := make(chan struct{})
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin().Robots("User-agent: *\nAllow: /\n").Otherwise(etiquettetest.HTMLPage("leaf"))
	// Six links and --max-queue 2: the crawler warns that it follows only the first two. The
	// start page waits until the progress line is on the terminal.
	o.Serve("/", etiquettetest.HTMLPage("start", "/1", "/2", "/3", "/4", "/5", "/6").HoldUntil(release))

	tty, term := openTerminal(t, "done ·")
	go func() {
		select {
		case <-term.seen:
		case <-time.After(30 * time.Second): // no line drawn: the test fails below, after the crawl
		}
		close(release)
	}()
	var stdout bytes.Buffer
	args := append([]string{"crawl", "--no-cache", "--no-discovery", "--max-queue", "2", "--authorized-rate", o.Addr() + "=50"}, identityArgs...)
	code := run(context.Background(), append(args, o.URL+"/"), env{stdout: &stdout, stderr: tty, getenv: func(string) string { return "" }})
	if code != exitOK {
		t.Fatalf("exit %d, want 0", code)
	}
	raw := term.output()
	select {
	case <-term.seen:
	default:
		t.Fatalf("no progress line was drawn on the terminal:\n%q", raw)
	}

	const record = "level=WARN msg=\"crawler: a page has more links than the limit"
	var logLine string
	for _, l := range screen(raw) {
		if strings.Contains(l, record) {
			logLine = l
		}
	}
	switch {
	case logLine == "":
		t.Fatalf("the crawl's warning is not on its stderr (a terminal):\n%s", strings.Join(screen(raw), "\n"))
	case !strings.HasPrefix(logLine, "time="):
		t.Errorf("the warning shares its line with the progress line; the terminal shows:\n%s", logLine)
	case strings.Contains(logLine, "done ·"):
		t.Errorf("the progress line shows through the warning; the terminal shows:\n%s", logLine)
	}
	if after := raw[strings.Index(raw, record):]; !strings.Contains(after, "done ·") {
		t.Errorf("the progress line was not drawn again after the warning:\n%q", after)
	}
}
