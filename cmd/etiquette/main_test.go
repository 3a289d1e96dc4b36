package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness"
)

// runCLI runs one command line in-process and returns its exit code and output.
func runCLI(t *testing.T, environ map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, env{stdout: &out, stderr: &errb, getenv: func(k string) string { return environ[k] }})
	return code, out.String(), errb.String()
}

func TestUACheckFAU(t *testing.T) {
	valid := []string{
		"FAU-RRZE-Legalcheck/1.0 (+https://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster@fau.de)",
		"FAU-RRZE-Legalcheck/1.0 (+https://www.rrze.fau.de/bots/legalcheck/; mailto:webmaster@fau.de)",
		"FAU-INF12-Linkcheck/2.10 (+https://www.cs.fau.de/linkcheck;mailto:linkcheck@cs.fau.de)",
	}
	for _, ua := range valid {
		code, out, errOut := runCLI(t, nil, "ua", "check", "--profile", "fau", ua)
		if code != exitOK {
			t.Errorf("ua check --profile fau %q = exit %d, want 0; stdout %q stderr %q", ua, code, out, errOut)
		}
	}
	invalid := []string{"Mozilla/5.0", "python-requests/2.32", "curl/8.0", "Crawler", "FAU-Bot", "FAU-RRZE-Legalcheck", "FAU-RRZE-Legalcheck/1.0"}
	for _, ua := range invalid {
		code, out, _ := runCLI(t, nil, "ua", "check", "--profile", "fau", ua)
		if code != exitNo {
			t.Errorf("ua check --profile fau %q = exit %d, want 1", ua, code)
		}
		if strings.TrimSpace(out) == "" {
			t.Errorf("ua check --profile fau %q printed no reason", ua)
		}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if !strings.Contains(l, ":") {
				t.Errorf("ua check %q: problem line %q does not say which part is wrong", ua, l)
			}
		}
	}
}

func TestUACheckGeneric(t *testing.T) {
	cases := []struct {
		ua    string
		valid bool
	}{
		{"ExampleBot/1.2 (+https://example.org/bot; mailto:bot@example.org)", true},
		{"ExampleBot/1.2 (+https://example.org/bot)", true}, // contact recommended: a warning
		{"Mozilla/5.0 (compatible; ExampleBot/1.2; +https://example.org/bot)", true},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36", false},
		{"Go-http-client/1.1", false},
		{"colly - https://github.com/gocolly/colly", false},
		{"Wget/1.21", false},
		{"ExampleBot", false},
		{"ExampleBot/1.2", false},
		{"", false},
	}
	for _, c := range cases {
		code, out, _ := runCLI(t, nil, "ua", "check", c.ua)
		if got := code == exitOK; got != c.valid {
			t.Errorf("ua check %q = exit %d (stdout %q), want valid=%v", c.ua, code, out, c.valid)
		}
	}
	_, _, errOut := runCLI(t, nil, "ua", "check", "ExampleBot/1.2 (+https://example.org/bot)")
	if !strings.Contains(strings.ToLower(errOut), "warning") {
		t.Errorf("a UA without contact should warn on stderr, got %q", errOut)
	}
}

func TestUABuild(t *testing.T) {
	code, out, errOut := runCLI(t, nil, "ua", "build", "--profile", "fau", "--org", "RRZE", "--bot", "Legalcheck",
		"--bot-version", "1.0", "--info-url", "https://www.rrze.fau.de/bots/legalcheck/", "--contact", "webmaster@fau.de")
	want := "FAU-RRZE-Legalcheck/1.0 (+https://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster@fau.de)\n"
	if code != exitOK || out != want {
		t.Fatalf("ua build fau = %d %q (stderr %q), want 0 %q", code, out, errOut, want)
	}
	code, out, _ = runCLI(t, map[string]string{"ETIQUETTE_UA": "ExampleBot/1.2 (+https://example.org/bot; mailto:bot@example.org)"}, "ua", "build")
	if code != exitOK || !strings.HasPrefix(out, "ExampleBot/1.2") {
		t.Fatalf("ua build from ETIQUETTE_UA = %d %q", code, out)
	}
	for _, args := range [][]string{
		{"ua", "build"}, // nothing configured
		{"ua", "build", "--token", "curl", "--bot-version", "1", "--info-url", "https://example.org"},
		{"ua", "build", "--profile", "fau", "--org", "RRZE", "--bot", "X", "--bot-version", "1.0", "--info-url", "http://insecure.example"},
		{"ua", "build", "--token", "ExampleBot", "--bot-version", "1.0"},
		{"ua", "build", "--unknown-flag"},
	} {
		code, _, errOut := runCLI(t, nil, args...)
		if code != exitUsage {
			t.Errorf("%q = exit %d, want 2", args, code)
		}
		if !strings.Contains(errOut, "--") && !strings.Contains(errOut, "flag") {
			t.Errorf("%q: message %q does not name a flag to change", args, errOut)
		}
	}
}

func TestRobotsCommand(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "robots.txt")
	if err := os.WriteFile(file, []byte("User-agent: ExampleBot\nDisallow: /private\nAllow: /private/ok\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, nil, "robots", file, "ExampleBot", "https://example.org/private/x")
	if code != exitNo || !strings.HasPrefix(out, "disallowed\n") || !strings.Contains(out, "line 2") {
		t.Errorf("disallowed case: exit %d, output %q", code, out)
	}
	code, out, _ = runCLI(t, nil, "robots", file, "ExampleBot", "https://example.org/private/ok/1")
	if code != exitOK || !strings.HasPrefix(out, "allowed\n") || !strings.Contains(out, "line 3") {
		t.Errorf("allowed case: exit %d, output %q", code, out)
	}
	code, out, _ = runCLI(t, nil, "robots", file, "OtherBot", "https://example.org/private/x")
	if code != exitOK || !strings.Contains(out, "no matching rule") {
		t.Errorf("other token: exit %d, output %q", code, out)
	}
	if code, _, _ := runCLI(t, nil, "robots", filepath.Join(dir, "missing.txt"), "ExampleBot", "https://example.org/"); code != exitUsage {
		t.Errorf("missing file: exit %d, want 2", code)
	}
	if code, _, _ := runCLI(t, nil, "robots", file, "ExampleBot"); code != exitUsage {
		t.Errorf("missing argument: exit %d, want 2", code)
	}
}

// robots --user-triggered decides as fetch does: * does not block a person's fetch, a group
// naming the user-triggered token does; --strict-robots adds * and the crawl token's group.
func TestRobotsUserTriggered(t *testing.T) {
	file := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(file, []byte("User-agent: *\nDisallow: /\n\nUser-agent: ExampleBot-User\nDisallow: /members\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"--user-triggered", file, "ExampleBot-User", "https://example.org/article"}, exitOK},
		{[]string{"--user-triggered", file, "ExampleBot-User", "https://example.org/members/x"}, exitNo},
		{[]string{"--user-triggered", "--strict-robots", "--crawl-token", "ExampleBot", file, "ExampleBot-User", "https://example.org/article"}, exitNo},
		{[]string{file, "ExampleBot", "https://example.org/article"}, exitNo},
		{[]string{"--strict-robots", file, "ExampleBot-User", "https://example.org/article"}, exitUsage},
		{[]string{"--user-triggered", "--compare-colly", file, "ExampleBot-User", "https://example.org/article"}, exitUsage},
	}
	for _, c := range cases {
		if code, out, errOut := runCLI(t, nil, append([]string{"robots"}, c.args...)...); code != c.code {
			t.Errorf("robots %q: exit %d (%q %q), want %d", c.args, code, out, errOut, c.code)
		}
	}
	// Under the strict reading several groups decide: the output says whose rule it was.
	_, out, _ := runCLI(t, nil, "robots", "--user-triggered", "--strict-robots", "--crawl-token", "ExampleBot", file, "ExampleBot-User", "https://example.org/article")
	if !strings.Contains(out, "line 2: Disallow: / (the group for ExampleBot: *)") {
		t.Errorf("strict refusal does not name the group that decided:\n%s", out)
	}
}

var identityArgs = []string{"--token", "ExampleBot", "--bot-version", "1.0", "--info-url", "https://example.org/bot", "--contact", "bot@example.org"}

func TestCrawlPrintsALinePerURL(t *testing.T) {
	var mu sync.Mutex
	var uas []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		uas = append(uas, r.UserAgent())
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
		case "/":
			http.SetCookie(w, &http.Cookie{Name: "_ga", Value: "GA1.1.1"})
			fmt.Fprint(w, `<a href="/a">a</a><a href="/private/b">b</a><a href="/nofollow">c</a><a href="https://elsewhere.invalid/">x</a>`)
		case "/nofollow":
			fmt.Fprint(w, `<meta name="robots" content="noindex, nofollow"><a href="/never">never</a>`)
		default:
			fmt.Fprint(w, "<p>leaf</p>")
		}
	}))
	defer srv.Close()
	args := append([]string{"crawl", "--no-cache"}, identityArgs...)
	args = append(args, "--authorized-rate", srv.Listener.Addr().String()+"=20", "--rate", "20", srv.URL+"/")
	code, out, errOut := runCLI(t, nil, args...)
	if code != exitOK {
		t.Fatalf("crawl: exit %d\nstderr: %s", code, errOut)
	}
	byURL := map[string]line{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("stdout line %q is not JSON: %v", sc.Text(), err)
		}
		byURL[l.URL] = l
	}
	if l, ok := byURL[srv.URL+"/robots.txt"]; !ok || l.Kind != "robots" || l.Status != 200 {
		t.Errorf("no robots.txt line with kind robots and status 200: %+v", byURL)
	}
	if l := byURL[srv.URL+"/"]; l.Status != 200 || l.FoundVia != "start" || l.Bytes == 0 {
		t.Errorf("start page line = %+v", l)
	}
	if l := byURL[srv.URL+"/a"]; l.Status != 200 || l.FoundVia != "link" {
		t.Errorf("linked page line = %+v", l)
	}
	if l := byURL[srv.URL+"/private/b"]; l.Refused != "robots" || l.Reason == "" {
		t.Errorf("disallowed page line = %+v", l)
	}
	if _, ok := byURL[srv.URL+"/never"]; ok {
		t.Errorf("followed a link from a nofollow page")
	}
	if _, ok := byURL["https://elsewhere.invalid/"]; ok {
		t.Errorf("followed a link off the start origin")
	}
	if !strings.Contains(errOut, "URLs decided") || !strings.Contains(errOut, "cookies refused: 1 (analytics 1)") {
		t.Errorf("no summary on stderr: %q", errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	expectUserAgent(t, uas, "ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org)")
}

func TestCrawlRefusesBadInput(t *testing.T) {
	cases := map[string][]string{
		"no identity":      {"crawl", "http://127.0.0.1:1/"},
		"invalid UA":       {"crawl", "--ua", "curl/8.0", "http://127.0.0.1:1/"},
		"missing info URL": {"crawl", "--token", "ExampleBot", "--bot-version", "1.0", "http://127.0.0.1:1/"},
		"unknown flag":     append(append([]string{"crawl"}, identityArgs...), "--turbo", "http://127.0.0.1:1/"),
		"no start URL":     append([]string{"crawl"}, identityArgs...),
		"relative URL":     append(append([]string{"crawl"}, identityArgs...), "/just/a/path"),
		"rate above 3":     append(append([]string{"crawl", "--rate", "10"}, identityArgs...), "http://127.0.0.1:1/"),
		"not a redis URL":  append(append([]string{"crawl", "--redis", "http://127.0.0.1:6379"}, identityArgs...), "http://127.0.0.1:1/"),
		"redis wait zero":  append(append([]string{"crawl", "--redis", "redis://127.0.0.1:1", "--redis-wait", "0s"}, identityArgs...), "http://127.0.0.1:1/"),
	}
	for name, args := range cases {
		code, out, errOut := runCLI(t, nil, args...)
		if code != exitUsage {
			t.Errorf("%s: exit %d, want 2 (stderr %q)", name, code, errOut)
		}
		if out != "" {
			t.Errorf("%s: printed %q on stdout", name, out)
		}
		if strings.TrimSpace(errOut) == "" {
			t.Errorf("%s: no message on stderr", name)
		}
	}
}

func TestCrawlInterrupted(t *testing.T) {
	var mu sync.Mutex
	var arrivals []time.Time
	slowArrived := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrivals = append(arrivals, time.Now())
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case "/":
			fmt.Fprint(w, `<a href="/slow">slow</a>`)
			for i := 0; i < 20; i++ {
				fmt.Fprintf(w, `<a href="/p%d">p</a>`, i)
			}
		case "/slow":
			close(slowArrived)
			time.Sleep(time.Second)
			fmt.Fprint(w, "finally")
		default:
			fmt.Fprint(w, "leaf")
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int)
	go func() {
		args := append(append([]string{"crawl", "--no-cache"}, identityArgs...), srv.URL+"/")
		done <- run(ctx, args, env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }})
	}()
	select {
	case <-slowArrived:
	case <-time.After(20 * time.Second):
		t.Fatal("the slow page was not requested within 20 s")
	}
	interrupted := time.Now()
	cancel()
	select {
	case code := <-done:
		if code != exitInterrupted {
			t.Errorf("exit %d after interrupt, want 130", code)
		}
	case <-time.After(drainTime + 10*time.Second):
		t.Fatal("crawl did not stop after the interrupt")
	}
	mu.Lock()
	for _, at := range arrivals {
		if at.After(interrupted.Add(100 * time.Millisecond)) {
			t.Errorf("a request reached the site %s after the interrupt", at.Sub(interrupted))
		}
	}
	mu.Unlock()
	lines := map[string]line{}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		lines[l.URL] = l
	}
	if l := lines[srv.URL+"/slow"]; l.Status != 200 || l.Bytes != int64(len("finally")) {
		t.Errorf("the request on the wire at the interrupt did not finish: %+v", l)
	}
	stopped := 0
	for _, l := range lines {
		if l.Refused == "error" && strings.Contains(l.Reason, "interrupted") {
			stopped++
		}
	}
	if stopped == 0 {
		t.Errorf("no line reports a request that was waiting at the interrupt:\n%s", out.String())
	}
	if !strings.Contains(errb.String(), "interrupted") || !strings.Contains(errb.String(), "URLs decided") {
		t.Errorf("no interrupt summary on stderr: %q", errb.String())
	}
}

// syncBuffer is a bytes.Buffer that a running command writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestRobotsCompareColly(t *testing.T) {
	file := filepath.Join(t.TempDir(), "robots.txt")
	// A tie between Allow and Disallow of equal length: RFC 9309 §2.2.2 says allow wins;
	// temoto (Colly) takes the first rule.
	if err := os.WriteFile(file, []byte("User-agent: *\nDisallow: /page\nAllow: /page\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, nil, "robots", "--compare-colly", file, "ExampleBot", "https://example.org/page")
	if code != exitOK || !strings.HasPrefix(out, "allowed\n") || !strings.Contains(out, "colly: disallowed") || !strings.Contains(out, "DIFFERENT") {
		t.Errorf("tie: exit %d, output %q", code, out)
	}
	code, out, _ = runCLI(t, nil, "robots", "--compare-colly", file, "ExampleBot", "https://example.org/other")
	if code != exitOK || !strings.Contains(out, "colly: allowed") || strings.Contains(out, "DIFFERENT") {
		t.Errorf("agreement: exit %d, output %q", code, out)
	}
}

func TestFetchUserTriggered(t *testing.T) {
	var mu sync.Mutex
	var uas []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		uas = append(uas, r.UserAgent())
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			// The crawl token is blocked everywhere; the user-triggered token only from /members.
			fmt.Fprint(w, "User-agent: ExampleBot\nDisallow: /\n\nUser-agent: ExampleBot-User\nDisallow: /members\n")
		case "/article":
			fmt.Fprint(w, "the article")
		case "/busy":
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	fetch := func(path string) (int, string, string) {
		return runCLI(t, nil, append(append([]string{"fetch"}, identityArgs...), srv.URL+path)...)
	}
	if code, out, errOut := fetch("/article"); code != exitOK || out != "the article" || !strings.Contains(errOut, "200") {
		t.Errorf("allowed page: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, out, errOut := fetch("/members/page"); code != exitRobots || out != "" || !strings.Contains(errOut, "ExampleBot-User") {
		t.Errorf("page blocked for the user token: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, _ := fetch("/missing"); code != exitNo {
		t.Errorf("404: exit %d, want 1", code)
	}
	// --max-wait 0 means the default bound, as Policy.MaxWait 0 does, and the refusal names it.
	code, _, errOut := runCLI(t, nil, append(append([]string{"fetch", "--max-wait", "0"}, identityArgs...), srv.URL+"/busy")...)
	if want := "not waiting longer than " + roughly(politeness.DefaultMaxWait); code != exitNo || !strings.Contains(errOut, want) {
		t.Errorf("--max-wait 0 against a Retry-After of 60 s: exit %d, stderr %q; want exit 1 saying %q", code, errOut, want)
	}
	mu.Lock()
	defer mu.Unlock()
	expectUserAgent(t, uas, "ExampleBot-User/1.0 (+https://example.org/bot; mailto:bot@example.org)")
}

func TestCrawlTwiceFromTheCache(t *testing.T) {
	var mu sync.Mutex
	bodyRequests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		mu.Lock()
		bodyRequests++
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case "/":
			w.Header().Set("Cache-Control", "max-age=3600")
			fmt.Fprint(w, `<a href="/a">a</a>`)
		default:
			w.Header().Set("Cache-Control", "no-cache")
			fmt.Fprint(w, "<p>leaf</p>")
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	args := append(append([]string{"crawl", "--cache-dir", dir, "--no-discovery"}, identityArgs...), srv.URL+"/")
	if code, _, errOut := runCLI(t, nil, args...); code != exitOK {
		t.Fatalf("first crawl: exit %d: %s", code, errOut)
	}
	mu.Lock()
	first := bodyRequests
	mu.Unlock()
	code, out, errOut := runCLI(t, nil, args...)
	if code != exitOK {
		t.Fatalf("second crawl: exit %d: %s", code, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	if first != 3 || bodyRequests != first {
		t.Errorf("the site sent %d bodies in the first crawl (want 3) and %d more in the second (want 0)", first, bodyRequests-first)
	}
	// robots.txt is not in the list: this process's robots keeper still holds it from the first
	// crawl (a second process would revalidate it).
	want := map[string]string{srv.URL + "/": "fresh", srv.URL + "/a": "revalidated"}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if w, ok := want[l.URL]; ok {
			if l.Cache != w {
				t.Errorf("%s: cache %q, want %q", l.URL, l.Cache, w)
			}
			if l.Status != 200 {
				t.Errorf("%s: status %d, want 200 as the caller sees it", l.URL, l.Status)
			}
			delete(want, l.URL)
		}
	}
	if len(want) != 0 {
		t.Errorf("no line for %v", want)
	}
}

// expectUserAgent checks that the site saw want, and only want, on every request.
func expectUserAgent(t *testing.T, seen []string, want string) {
	t.Helper()
	if len(seen) == 0 {
		t.Error("the site saw no request")
	}
	for _, ua := range seen {
		if ua != want {
			t.Errorf("the site saw User-Agent %q, want %q", ua, want)
		}
	}
}
