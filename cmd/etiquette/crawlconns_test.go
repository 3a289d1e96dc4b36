package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// origins starts n loopback origins that allow everything and answer / with a leaf page after
// delay, counting the connections open to all of them at once.
type origins struct {
	urls       []string
	mu         sync.Mutex
	open, peak int
}

func startOrigins(t *testing.T, n int, delay time.Duration) *origins {
	t.Helper()
	o := &origins{}
	for range n {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				io.WriteString(w, "User-agent: *\nAllow: /\n")
				return
			}
			time.Sleep(delay) // a slow page, so that connections overlap
			io.WriteString(w, "<p>leaf</p>")
		}))
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			o.mu.Lock()
			defer o.mu.Unlock()
			switch s {
			case http.StateNew:
				o.open++
				o.peak = max(o.peak, o.open)
			case http.StateClosed, http.StateHijacked:
				o.open--
			}
		}
		srv.Start()
		t.Cleanup(srv.Close)
		o.urls = append(o.urls, srv.URL+"/")
	}
	return o
}

// A crawl of many origins holds connections in proportion to --workers, not to the origins it
// visited. Before, net/http's defaults kept up to 100 idle connections for 90 s: 100 origins
// crawled with 4 workers left about 100 connections open at once.
func TestCrawlConnectionsStayWithinTheWorkers(t *testing.T) {
	const workers = 4
	o := startOrigins(t, 100, 0)
	args := append(append([]string{"crawl", "--no-cache", "--no-discovery", "--workers", strconv.Itoa(workers)}, identityArgs...), o.urls...)
	code, _, errOut := runCLI(t, nil, args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	// A request in flight per worker, and at most --workers idle ones kept for reuse (in each of
	// the door's two connection pools: plain and private-network-checked).
	t.Logf("peak %d connections open at once", o.peak)
	if limit := 3 * workers; o.peak > limit {
		t.Errorf("%d connections open at once with --workers %d; want at most %d", o.peak, workers, limit)
	}
}

// A crawl that runs out of file descriptors says so and fails (exit 1): the origins it lost are
// this machine's failure, not robots.txt "unreachable" at the sites. Before, the crawl exited 0
// with those origins' pages refused as if their robots.txt could not be fetched. The crawl runs
// in a child process (this test binary again) whose descriptor limit is lowered.
func TestCrawlOutOfDescriptorsFails(t *testing.T) {
	if os.Getenv("ETIQUETTE_FD_CHILD") != "" {
		crawlWithFewDescriptors()
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("counts descriptors in /proc/self/fd")
	}
	o := startOrigins(t, 60, 200*time.Millisecond)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrawlOutOfDescriptorsFails$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ETIQUETTE_FD_CHILD=1", "ETIQUETTE_FD_URLS="+strings.Join(o.urls, " "))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "crawl exit 1\n") || !strings.Contains(string(out), "out of file descriptors (EMFILE)") {
		t.Errorf("the crawl did not fail naming EMFILE:\n%s", out)
	}
}

// crawlWithFewDescriptors is the child: it lowers its descriptor limit to a dozen above what it
// holds, crawls the origins with 40 workers and prints the exit code and stderr.
func crawlWithFewDescriptors() {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		fmt.Println("child:", err)
		return
	}
	limit := uint64(len(fds) + 12)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
		fmt.Println("child: setrlimit:", err)
		return
	}
	args := append(append([]string{"crawl", "--no-cache", "--no-discovery", "--workers", "40"}, identityArgs...),
		strings.Fields(os.Getenv("ETIQUETTE_FD_URLS"))...)
	var stderr bytes.Buffer
	code := run(context.Background(), args, env{stdout: io.Discard, stderr: &stderr, getenv: func(string) string { return "" }})
	fmt.Printf("crawl exit %d\n%s", code, stderr.String())
}
