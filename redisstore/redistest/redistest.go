// Package redistest starts a private redis-server for a test — or a Redis Cluster of three
// masters ([StartCluster]) — on free loopback ports, in a temporary directory, stopped when the
// test ends. Stop and Restart let a test cut Redis off mid-run and bring it back with its data,
// as an outage of a Redis that persists would; Crash and Restart bring it back empty, as a
// restart without persistence does; Freeze and Thaw stop it answering without closing anything.
//
// It works from plain tests and from Ginkgo (pass GinkgoT()): both satisfy [TB].
package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// TB is the part of testing.TB the helper uses; *testing.T, *testing.B and Ginkgo's GinkgoT()
// satisfy it.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
	TempDir() string
}

// readyLine is what redis-server logs once it accepts connections.
const readyLine = "Ready to accept connections"

// startTimeout bounds the wait for a server to say it is ready; a loaded 2-core machine starts
// one in tens of milliseconds.
const startTimeout = 20 * time.Second

// Server is a redis-server run for one test. Its zero value is not usable; call [Start].
type Server struct {
	// Addr is the server's host:port on loopback.
	Addr string

	t     TB
	dir   string
	extra []string // more redis-server arguments (cluster mode)

	mu  sync.Mutex
	cmd *exec.Cmd
	out chan struct{} // closed when cmd has exited
}

// Start runs redis-server on a free loopback port with a temporary directory, no background
// saves and no append-only file (--save "" --appendonly no), and stops it when the test ends.
// It fails the test, saying how to install it, when redis-server is not on the PATH.
func Start(t TB) *Server {
	t.Helper()
	return start(t, t.TempDir(), nil)
}

// start runs a server in dir with the extra arguments. A cluster node also binds its port +
// 10000 (the cluster bus), which must be free too.
func start(t TB, dir string, extra []string) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatalf("redistest: redis-server is not installed (%v); install it with `apt-get install redis-server` "+
			"(or `brew install redis`) so that the Redis tests can start their own server", err)
		return nil
	}
	s := &Server{t: t, dir: dir, extra: extra}
	var last error
	for range 10 { // another process may take the free port between asking and binding
		port, err := freePort(extra != nil)
		if err != nil {
			t.Fatalf("redistest: no free loopback port: %v", err)
			return nil
		}
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if last = s.start(); last == nil {
			t.Cleanup(s.kill)
			return s
		}
	}
	t.Fatalf("redistest: redis-server did not start: %v", last)
	return nil
}

// URL returns the server's address as a redis:// URL.
func (s *Server) URL() string { return "redis://" + s.Addr + "/0" }

// Client returns a client of the server, closed when the test ends.
func (s *Server) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	s.t.Cleanup(func() { c.Close() })
	return c
}

// Stop saves the data set to the temporary directory and shuts the server down: until Restart,
// connections to Addr are refused.
func (s *Server) Stop() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	// SHUTDOWN SAVE writes dump.rdb (the server was started without background saves) and closes
	// the connection instead of answering, so its error is expected.
	_ = c.ShutdownSave(ctx).Err()
	select {
	case <-s.out:
	case <-ctx.Done():
		_ = s.cmd.Process.Kill()
		<-s.out
	}
	s.cmd = nil
}

// Restart starts the server again on the same port, with the data Stop saved. (redis-server
// binds with SO_REUSEADDR, so the port is free again as soon as the old server has exited.)
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatalf("redistest: redis-server did not restart on %s: %v", s.Addr, err)
	}
}

var errInUse = errors.New("address in use")

// start runs redis-server on s.Addr and waits until it is ready or has exited.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, port, _ := net.SplitHostPort(s.Addr)
	args := append([]string{"--port", port, "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "", "--appendonly", "no", "--logfile", "", "--daemonize", "no"}, s.extra...)
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "PORT", port)
	}
	cmd := exec.Command("redis-server", args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return err
	}
	ready := make(chan struct{})
	var log strings.Builder
	var logMu sync.Mutex
	out := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		signalled := false
		for sc.Scan() {
			logMu.Lock()
			if log.Len() < 16<<10 {
				log.WriteString(sc.Text() + "\n")
			}
			logMu.Unlock()
			if !signalled && strings.Contains(sc.Text(), readyLine) {
				signalled = true
				close(ready)
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
		close(out)
	}()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case <-ready:
		s.cmd, s.out = cmd, out
		return nil
	case <-out:
	case <-timer.C:
		_ = cmd.Process.Kill()
		<-out
	}
	logMu.Lock()
	defer logMu.Unlock()
	if strings.Contains(log.String(), "Address already in use") {
		return fmt.Errorf("%w: %s", errInUse, s.Addr)
	}
	return fmt.Errorf("redis-server on %s exited before it was ready:\n%s", s.Addr, log.String())
}

// kill ends the server without saving; the test is over.
func (s *Server) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.out
	s.cmd = nil
}

// Crash kills the server without saving: Restart then brings it back empty, as a Redis without
// persistence comes back from a crash or a restart.
func (s *Server) Crash() {
	s.t.Helper()
	s.kill()
}

// Freeze stops the server process (SIGSTOP): connections stay open and commands get no answer,
// as with a hung server or a network that drops packets, until Thaw.
func (s *Server) Freeze() { s.signal(syscall.SIGSTOP) }

// Thaw lets a frozen server run again (SIGCONT).
func (s *Server) Thaw() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		s.t.Fatalf("redistest: the server on %s is not running", s.Addr)
		return
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatalf("redistest: %v to the server on %s: %v", sig, s.Addr, err)
	}
}

// freePort returns a free loopback port; with bus, one whose port + 10000 is free too.
func freePort(bus bool) (int, error) {
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		if !bus {
			l.Close()
			return port, nil
		}
		if port+10000 > 65535 {
			l.Close()
			continue
		}
		b, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+10000)))
		l.Close()
		if err == nil {
			b.Close()
			return port, nil
		}
	}
	return 0, errors.New("no port P with P+10000 free among 20 tries")
}
