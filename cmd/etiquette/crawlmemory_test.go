//go:build linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/frontier"
)

// The crawl's memory bound is a safety bound, not a speed figure: these tests run the built
// command against a page of 10 MB holding 384,444 same-origin links, and read the process's
// peak resident set from the kernel (getrusage's ru_maxrss, in KiB on Linux).
//
// Why 256 MB holds: the crawl runs a fixed number of workers (no goroutine per link); each page
// streams through a tokenizer, so the 10 MB body is never held whole (a DOM of it peaks near
// 380 MB); the page's links are resolved up to 100,000 (links.DefaultMaxLinks, the --max-queue
// default) and the rest only counted; and the origin's queue holds at most 100,000 URLs of a few
// dozen bytes each. What is left is the runtime, net/http and some tens of MB of URLs.
const memoryBoundKiB = 256 << 10

// manyLinks is the number of links on the big page: 10 MB of them.
const manyLinks = 384_444

var builtCLI struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtCLI.dir != "" {
		os.RemoveAll(builtCLI.dir)
	}
	os.Exit(code)
}

// etiquetteBinary builds the command once per test run and returns its path.
func etiquetteBinary(t *testing.T) string {
	t.Helper()
	builtCLI.once.Do(func() {
		if builtCLI.dir, builtCLI.err = os.MkdirTemp("", "etiquette-cli"); builtCLI.err != nil {
			return
		}
		builtCLI.path = filepath.Join(builtCLI.dir, "etiquette")
		out, err := exec.Command("go", "build", "-o", builtCLI.path, ".").CombinedOutput()
		if err != nil {
			builtCLI.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if builtCLI.err != nil {
		t.Fatal(builtCLI.err)
	}
	return builtCLI.path
}

// bigPageSite serves / as a 10 MB page of manyLinks links to /p/N, and a small leaf at every
// /p/N. bigServed is closed once the whole big page has been written.
func bigPageSite(t *testing.T) (srv *httptest.Server, bigServed <-chan struct{}) {
	t.Helper()
	served := make(chan struct{})
	var once sync.Once
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case r.URL.Path == "/":
			w.Header().Set("Content-Type", "text/html")
			bw := bufio.NewWriterSize(w, 64<<10)
			bw.WriteString("<!doctype html><title>many links</title>\n")
			for i := range manyLinks {
				fmt.Fprintf(bw, "<a href=\"/p/%06d\">p</a>\n", i)
			}
			bw.Flush()
			once.Do(func() { close(served) })
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<p>leaf</p>")
		}
	}))
	t.Cleanup(srv.Close)
	return srv, served
}

// crawlArgs are the flags of a memory test's crawl: no disk cache, no discovery (the page is the
// load), and 50 starts per second for the loopback origin, so that pages come quickly.
func crawlArgs(srv *httptest.Server, extra ...string) []string {
	args := append([]string{"crawl", "--no-cache", "--no-discovery", "--authorized-rate", srv.Listener.Addr().String() + "=50"}, identityArgs...)
	return append(append(args, extra...), srv.URL+"/")
}

// startCrawl starts the built command. wait reads its stdout to the end, counting the lines,
// and waits for it to exit; stderr is kept.
func startCrawl(t *testing.T, args []string) (cmd *exec.Cmd, wait func() (lines int, err error), stderr *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cmd = exec.CommandContext(ctx, etiquetteBinary(t), args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr = &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	wait = func() (int, error) {
		n := 0
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			n++
		}
		_, _ = io.Copy(io.Discard, stdout)
		return n, cmd.Wait()
	}
	return cmd, wait, stderr
}

// everyURLLines is the number of lines a crawl of the big page prints when it reports every URL
// it learnt of: robots.txt, the page, and the links it queued — the first 100,000 (the
// per-page default, --max-queue); the rest are counted in the summary.
const everyURLLines = 2 + frontier.DefaultMaxQueued

// maxRSSKiB is the peak resident set of the finished process.
func maxRSSKiB(t *testing.T, cmd *exec.Cmd) int64 {
	t.Helper()
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no resource usage for the process")
	}
	return ru.Maxrss
}

// TestCrawlMemoryBigPageMaxPages: --max-pages 30 on the big page stays under the bound and
// ends as asked.
func TestCrawlMemoryBigPageMaxPages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the command")
	}
	srv, _ := bigPageSite(t)
	cmd, wait, stderr := startCrawl(t, crawlArgs(srv, "--max-pages", "30"))
	n, err := wait()
	rss := maxRSSKiB(t, cmd)
	t.Logf("--max-pages 30 over %d links: peak RSS %d KiB (%.1f MB), %d lines on stdout", manyLinks, rss, float64(rss)/1024, n)
	if code := cmd.ProcessState.ExitCode(); code != exitOK {
		t.Fatalf("exit %d (%v): %s", code, err, stderr.String())
	}
	if rss > memoryBoundKiB {
		t.Errorf("peak RSS %d KiB, above the %d KiB bound", rss, memoryBoundKiB)
	}
	// The URLs left by the limit are one line for the origin, with their count: not 99,971 lines.
	if n != 1+30+1 || !strings.Contains(stderr.String(), "limit 99971") {
		t.Errorf("%d lines on stdout, want 32: robots.txt, 30 pages, one line for the 99,971 URLs left by the limit; summary:\n%s", n, stderr.String())
	}
}

// TestCrawlMemoryBigPageInterrupted: a crawl of the big page interrupted after 10 s (hundreds of
// pages fetched, the queue full) stays under the bound, reports and exits 130.
func TestCrawlMemoryBigPageInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the command")
	}
	srv, bigServed := bigPageSite(t)
	cmd, wait, stderr := startCrawl(t, crawlArgs(srv))
	var n int
	exited := make(chan error, 1)
	go func() {
		var err error
		n, err = wait()
		exited <- err
	}()
	// The scenario, not a synchronisation: a crawl that has run for a while with its queue full.
	select {
	case <-time.After(10 * time.Second):
	case err := <-exited:
		t.Fatalf("the crawl ended before the interrupt (%v): %s", err, stderr.String())
	}
	select {
	case <-bigServed:
	case err := <-exited:
		t.Fatalf("the crawl ended before reading the big page (%v): %s", err, stderr.String())
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	<-exited
	rss := maxRSSKiB(t, cmd)
	t.Logf("interrupted after 10 s over %d links: peak RSS %d KiB (%.1f MB)", manyLinks, rss, float64(rss)/1024)
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Errorf("exit %d after SIGINT, want 130: %s", code, stderr.String())
	}
	if rss > memoryBoundKiB {
		t.Errorf("peak RSS %d KiB, above the %d KiB bound", rss, memoryBoundKiB)
	}
	if !strings.Contains(stderr.String(), "interrupted") || !strings.Contains(stderr.String(), "URLs decided") {
		t.Errorf("no interrupt summary on stderr:\n%s", stderr.String())
	}
	if n != everyURLLines {
		t.Errorf("%d lines on stdout, want %d: every URL the crawl learnt of, fetched or not", n, everyURLLines)
	}
}
