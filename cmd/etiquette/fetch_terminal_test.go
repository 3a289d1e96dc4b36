package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// rawSite answers every request on loopback with the raw bytes answer(path) returns: a server
// that writes what net/http's server never would, such as escape sequences in the status line.
func rawSite(t *testing.T, answer func(path string) string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				io.WriteString(c, answer(req.URL.Path))
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

const hostile = "\x1b]0;owned\x07\x1b[2J\u202e"

// Nothing a server sends reaches the terminal raw: a status line, a robots.txt rule and an error
// quoting the server carry their control characters as visible escapes. Before, the status line
// was written to stderr as sent.
func TestFetchWritesNoServerControlCharacters(t *testing.T) {
	site := rawSite(t, func(path string) string {
		switch path {
		case "/robots.txt":
			body := "User-agent: ExampleBot-User\nDisallow: /blocked" + hostile + "\n"
			return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
		case "/redirect":
			return "HTTP/1.1 302 Found\r\nLocation: javascript:" + hostile + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
		}
		return "HTTP/1.1 200 OK" + hostile + "\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbody"
	})
	for _, path := range []string{"/page", "/blocked" + "%1b", "/redirect"} {
		_, _, errOut := runCLI(t, nil, append(append([]string{"fetch"}, identityArgs...), site+path)...)
		if strings.ContainsAny(errOut, "\x1b\x07\u202e") {
			t.Errorf("%s: stderr carries control characters: %q", path, errOut)
		}
	}
	_, _, errOut := runCLI(t, nil, append(append([]string{"fetch"}, identityArgs...), site+"/page")...)
	if !strings.Contains(errOut, `200 OK\x1b]0;owned\x07\x1b[2J\u202e`) {
		t.Errorf("the status line does not show what the server sent, escaped: %q", errOut)
	}
}

func TestTerminalSafe(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, été":        "plain text, été",
		"two\nlines":             "two\nlines",
		"\x1b[2J\x07\r\t\x7f":    `\x1b[2J\x07\x0d\x09\x7f`,
		"c1 \u009b31m":           `c1 \u009b31m`,
		"bidi \u202egnp.exe":     `bidi \u202egnp.exe`,
		"bad utf-8 \xff\xfe end": `bad utf-8 \xff\xfe end`,
	} {
		if got := terminalSafe(in); got != want {
			t.Errorf("terminalSafe(%q) = %q, want %q", in, got, want)
		}
	}
}

// A site answering 429 without Retry-After: the refusal names the 429 and suggests a --max-wait
// that would have been enough, counting the time already spent. Before, it said "a pause of
// 4.4 s (backoff); not waiting longer than 5 s (… or pass --max-wait 5s)".
func TestFetchAfter429sSaysWhatWouldBeEnough(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	start := time.Now()
	code, _, errOut := runCLI(t, nil, append(append([]string{"fetch", "--max-wait", "5s"}, identityArgs...), srv.URL+"/page")...)
	if code != exitNo {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(errOut, "429") {
		t.Errorf("the refusal does not name the 429: %q", errOut)
	}
	t.Logf("stderr: %s", errOut)
	m := regexp.MustCompile(`--max-wait (\d+)s\)`).FindStringSubmatch(errOut)
	if m == nil {
		t.Fatalf("no --max-wait suggested: %q", errOut)
	}
	var enough int
	fmt.Sscan(m[1], &enough)
	// The second pause is 4 to 5 s (backoff 2 s doubling, 25 % jitter) after 2 to 2.5 s spent.
	if time.Duration(enough)*time.Second < time.Since(start)+4*time.Second {
		t.Errorf("suggests --max-wait %ds after %s spent and a pause of at least 4 s still to come: %q", enough, time.Since(start).Round(time.Millisecond), errOut)
	}
}

// A robots.txt answering 429: the refusal says it was robots.txt's 429 that paused the origin.
// Before, it said "waiting for …/robots.txt: context deadline exceeded".
func TestFetchNamesA429OfRobotsTxt(t *testing.T) {
	// One origin per run: the robots.txt keeper and the host clock are the process's.
	for _, wait := range []string{"1s", "3s"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusTooManyRequests)
		}))
		defer srv.Close()
		code, _, errOut := runCLI(t, nil, append(append([]string{"fetch", "--max-wait", wait}, identityArgs...), srv.URL+"/page")...)
		if code != exitNo || !strings.Contains(errOut, "429 Too Many Requests") || !strings.Contains(errOut, "robots.txt") {
			t.Errorf("--max-wait %s: exit %d, stderr %q; want exit 1 naming robots.txt's 429", wait, code, errOut)
		}
	}
}

// A page cut at its size cap is reported as cut, not as a plain 200. Before, the status line read
// "HTTP/1.1 200 OK (10485760 bytes, …)" like a whole answer's.
func TestFetchReportsACutPage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, strings.Repeat("x", 10<<20+1))
	}))
	defer srv.Close()
	code, out, errOut := runCLI(t, nil, append(append([]string{"fetch"}, identityArgs...), srv.URL+"/huge")...)
	if code != exitNo || len(out) != 10<<20 || !strings.Contains(errOut, "200 OK, cut at 10485760 bytes") {
		t.Errorf("exit %d, %d bytes out, stderr %q; want exit 1 and the status line saying the body was cut", code, len(out), errOut)
	}
}

// FuzzTerminalSafe: whatever a server sends, what reaches the terminal is valid UTF-8 without a
// control character (but the newline) or a bidirectional control, and plain text is unchanged.
func FuzzTerminalSafe(f *testing.F) {
	for _, s := range []string{"200 OK", hostile, "\xff\xc3", "a\nb\r\n", "\u009b2J"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := terminalSafe(s)
		if !utf8.ValidString(got) {
			t.Fatalf("%q: invalid UTF-8 out: %q", s, got)
		}
		for _, r := range got {
			if (r < 0x20 && r != '\n') || (r >= 0x7f && r < 0xa0) || isBidiControl(r) {
				t.Fatalf("%q: %U reaches the terminal in %q", s, r, got)
			}
		}
		if !needsEscape(s) && got != s {
			t.Fatalf("plain %q changed to %q", s, got)
		}
	})
}
