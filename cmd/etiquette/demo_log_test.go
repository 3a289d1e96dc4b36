package main

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// demoChild names the arguments a re-run of this test binary gives the CLI (see
// TestDemoLogsLittleUnlessVerbose).
const demoChild = "ETIQUETTE_TEST_DEMO_ARGS"

// logRecord matches a line of a log record on stderr: slog's text handler (time=… level=…) or
// the default logger (2026/01/15 09:00:00 INFO …), which a library without a logger writes to.
var logRecord = regexp.MustCompile(`^(time=\S+ level=\w+ |\d{4}/\d\d/\d\d \d\d:\d\d:\d\d (DEBUG|INFO|WARN|ERROR) )`)

// TestDemoLogsLittleUnlessVerbose runs the demo as a process of its own, so that every log record
// reaches its stderr, whichever logger wrote it (the default logger included): without -v at
// most 10 lines of stderr are log records; with -v there are more, debug records among them. It
// crawls in real time (about 7 s each, the two at once).
func TestDemoLogsLittleUnlessVerbose(t *testing.T) {
	if args := os.Getenv(demoChild); args != "" {
		os.Exit(run(context.Background(), strings.Fields(args), env{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}))
	}
	if testing.Short() {
		t.Skip("crawls the demo site in real time (about 7 s)")
	}
	t.Parallel()
	records := func(t *testing.T, args string) (n int, levels map[string]bool, stderr string) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDemoLogsLittleUnlessVerbose$")
		cmd.Env = append(os.Environ(), demoChild+"="+args)
		var errb strings.Builder
		cmd.Stderr = &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("demo %s: %v; stderr:\n%s", args, err, errb.String())
		}
		levels = map[string]bool{}
		for _, line := range strings.Split(errb.String(), "\n") {
			if m := logRecord.FindStringSubmatch(line); m != nil {
				n++
				levels[regexp.MustCompile(`level=(\w+)| (DEBUG|INFO|WARN|ERROR) `).FindString(line)] = true
			}
		}
		return n, levels, errb.String()
	}
	t.Run("default", func(t *testing.T) {
		t.Parallel()
		if n, _, stderr := records(t, "demo"); n > 10 {
			t.Errorf("demo printed %d log records on stderr, want at most 10 (the rest with -v):\n%s", n, stderr)
		}
	})
	t.Run("-v", func(t *testing.T) {
		t.Parallel()
		n, levels, stderr := records(t, "demo -v")
		if n <= 10 || !levels["level=DEBUG"] && !levels["level=INFO"] {
			t.Errorf("demo -v printed %d log records at levels %v; want more than 10, the door's decisions among them:\n%s", n, levels, stderr)
		}
	})
}
