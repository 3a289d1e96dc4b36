//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The cost of a crawl of many origins is a measurement, not a CI test: it runs the built command
// on ETIQUETTE_MEASURE_ORIGINS distinct loopback origins (10,000 for the documented figures),
// each serving robots.txt (allow all) and one small page, with the default flags (16 workers,
// discovery on) and --no-cache, and reports the command's peak resident set (getrusage), the most
// file descriptors it held (/proc/PID/fd, sampled every 100 ms), its wall time, exit code and
// summary:
//
//	ETIQUETTE_MEASURE_ORIGINS=10000 go test -count=1 -timeout 30m -run '^TestCrawlManyOriginsCost$' -v ./cmd/etiquette/
//
// Why the bounds hold: connections follow --workers, not the origins visited (a request in flight
// per worker, at most --workers idle ones kept for 5 s, in each of the door's two pools), and an
// origin's state is forgotten a minute after its last use. Before those bounds, 10,000 origins
// held thousands of descriptors (an idle connection per origin for 90 s) and hundreds of MB.
const measureOriginsEnv = "ETIQUETTE_MEASURE_ORIGINS"

// measureFlagsEnv adds crawl flags to the measurement's, such as "--no-discovery" or
// "--workers 64".
const measureFlagsEnv = "ETIQUETTE_MEASURE_FLAGS"

// Bounds of the measurement with the default 16 workers: the descriptors the command holds
// besides its connections are a handful (stdio, epoll, the runtime's pipes), so 3 × 16
// connections and 64 others. Without discovery the memory bound is the crawl's safety bound
// (crawlmemory_test.go): it peaks under 80 MB. With discovery on, 10,000 origins take about
// 330 MB: discovery keeps a task per start origin while its documents are read and its start
// page waits for a worker, so its memory follows the start origins, under twice the bound.
const (
	manyOriginsFDBound              = 3*16 + 64
	manyOriginsMemoryBound          = memoryBoundKiB
	manyOriginsDiscoveryMemoryBound = 2 * memoryBoundKiB
)

// TestCrawlManyOriginsCost crawls ETIQUETTE_MEASURE_ORIGINS origins and reports what it cost;
// skipped when the variable is unset.
func TestCrawlManyOriginsCost(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv(measureOriginsEnv))
	if n <= 0 {
		t.Skipf("a measurement: set %s=10000 to run it", measureOriginsEnv)
	}
	raiseDescriptorLimit(t)
	site := startManyOrigins(t, n)

	flags := append([]string{"--no-cache"}, strings.Fields(os.Getenv(measureFlagsEnv))...)
	args := append(append(append([]string{"crawl"}, flags...), identityArgs...), site.urls...)
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, etiquetteBinary(t), args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	began := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fds := sampleDescriptors(cmd.Process.Pid)
	lines := readCrawlLines(t, stdout)
	waitErr := cmd.Wait()
	wall := time.Since(began)
	peakFDs := fds()

	rss := maxRSSKiB(t, cmd)
	code := cmd.ProcessState.ExitCode()
	t.Logf("%d origins, %s: peak RSS %d KiB (%.0f MB), peak %d file descriptors, wall %s, exit %d (%v)",
		n, strings.Join(flags, " "), rss, float64(rss)/1024, peakFDs, wall.Round(100*time.Millisecond), code, waitErr)
	t.Logf("stdout: %d lines, %d start pages 200, refused %v; at the origins: %d connections accepted, at most %d open at once",
		lines.total, lines.startPages, lines.refused, site.accepted.Load(), site.peak())
	t.Logf("summary:\n%s", lastLines(stderr.String(), 20))

	if code != exitOK {
		t.Fatalf("exit %d, want 0", code)
	}
	if lines.startPages != n {
		t.Errorf("%d start pages got a 200, want %d: every origin's page", lines.startPages, n)
	}
	if peakFDs > manyOriginsFDBound {
		t.Errorf("peak %d file descriptors, above %d: connections did not follow --workers", peakFDs, manyOriginsFDBound)
	}
	bound := manyOriginsMemoryBound
	if !slices.Contains(flags, "--no-discovery") {
		bound = manyOriginsDiscoveryMemoryBound
	}
	if rss > int64(bound) {
		t.Errorf("peak RSS %d KiB, above the %d KiB bound", rss, bound)
	}
}

// raiseDescriptorLimit lifts this process's soft descriptor limit to the hard one: the origins'
// listeners and the connections they accept need one each.
func raiseDescriptorLimit(t *testing.T) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatal(err)
		}
	}
}

// manyOrigins are n origins on distinct loopback addresses 127.0.x.y (x from 1, y 1..250), all
// on one port, served by one server that counts the connections open at once.
type manyOrigins struct {
	urls     []string
	accepted atomic.Int64
	mu       sync.Mutex
	open     int
	maxOpen  int
}

func (o *manyOrigins) peak() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.maxOpen
}

// startManyOrigins binds the n listeners. The port is the one the system gives the first
// address; another process may hold it on a later address, so a clash starts over on a new port.
func startManyOrigins(t *testing.T, n int) *manyOrigins {
	t.Helper()
	o := &manyOrigins{}
	srv := &http.Server{
		Handler:           http.HandlerFunc(serveSmallOrigin),
		ReadHeaderTimeout: 30 * time.Second,
		ConnState: func(_ net.Conn, s http.ConnState) {
			o.mu.Lock()
			defer o.mu.Unlock()
			switch s {
			case http.StateNew:
				o.accepted.Add(1)
				o.open++
				o.maxOpen = max(o.maxOpen, o.open)
			case http.StateClosed, http.StateHijacked:
				o.open--
			}
		},
	}
	var listeners []net.Listener
	for attempt := 0; ; attempt++ {
		var err error
		listeners, err = listenLoopbackOrigins(n)
		if err == nil {
			break
		}
		if attempt == 4 {
			t.Fatalf("binding %d loopback origins: %v", n, err)
		}
	}
	for _, l := range listeners {
		o.urls = append(o.urls, "http://"+l.Addr().String()+"/")
		go srv.Serve(l)
	}
	t.Cleanup(func() { srv.Close() })
	return o
}

// listenLoopbackOrigins binds 127.0.x.y:PORT for n addresses, or closes what it bound and fails.
func listenLoopbackOrigins(n int) ([]net.Listener, error) {
	if n > 250*250 {
		return nil, fmt.Errorf("at most %d origins", 250*250)
	}
	var ls []net.Listener
	port := "0"
	for i := range n {
		addr := net.JoinHostPort(fmt.Sprintf("127.0.%d.%d", 1+i/250, 1+i%250), port)
		l, err := net.Listen("tcp4", addr)
		if err != nil {
			for _, l := range ls {
				l.Close()
			}
			return nil, err
		}
		if i == 0 {
			_, port, _ = net.SplitHostPort(l.Addr().String())
		}
		ls = append(ls, l)
	}
	return ls, nil
}

// serveSmallOrigin is every origin: robots.txt allows all, / is a small page without links, and
// the rest (discovery's /sitemap.xml, /llms.txt) is 404.
func serveSmallOrigin(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/robots.txt":
		io.WriteString(w, "User-agent: *\nAllow: /\n")
	case "/":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><title>origin</title><p>One small page.</p>\n")
	default:
		http.NotFound(w, r)
	}
}

// sampleDescriptors counts the entries of /proc/PID/fd every 100 ms until the returned function
// is called, which returns the most seen. Sampling may miss a peak shorter than 100 ms.
func sampleDescriptors(pid int) (stop func() int) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	done := make(chan struct{})
	peak := make(chan int, 1)
	go func() {
		most := 0
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if n, err := countEntries(dir); err == nil {
				most = max(most, n)
			}
			select {
			case <-done:
				peak <- most
				return
			case <-tick.C:
			}
		}
	}()
	return func() int {
		close(done)
		return <-peak
	}
}

func countEntries(dir string) (int, error) {
	f, err := os.Open(dir)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	return len(names), nil
}

// crawlLines are what the crawl printed on stdout.
type crawlLines struct {
	total      int
	startPages int            // the start pages (path /) that got a 200
	refused    map[string]int // lines by refused reason
}

func readCrawlLines(t *testing.T, r io.Reader) crawlLines {
	t.Helper()
	c := crawlLines{refused: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		c.total++
		var l struct {
			URL     string `json:"url"`
			Status  int    `json:"status"`
			Refused string `json:"refused"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Errorf("a line that is not JSON: %q", sc.Text())
			continue
		}
		if l.Refused != "" {
			c.refused[l.Refused]++
		}
		if u, err := url.Parse(l.URL); err == nil && u.Path == "/" && l.Status == http.StatusOK {
			c.startPages++
		}
	}
	_, _ = io.Copy(io.Discard, r)
	return c
}

// lastLines is the end of s: its last n lines at most.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
