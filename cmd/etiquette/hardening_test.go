package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRobotsRefusesUnusableInput: robots decides only for an absolute http(s) URL and a product
// token a crawler can have; anything else exits 2 naming the problem, with nothing on stdout.
func TestRobotsRefusesUnusableInput(t *testing.T) {
	file := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(file, []byte("User-agent: *\nDisallow: /secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		token, url, says string
	}{
		{"ExampleBot", "example.org/secret", "absolute http(s)"},
		{"ExampleBot", "/secret", "absolute http(s)"},
		{"ExampleBot", "ftp://example.org/secret", "absolute http(s)"},
		{"ExampleBot/1.0", "https://example.org/secret", "PRODUCT_TOKEN"},
		{"Example Bot", "https://example.org/secret", "PRODUCT_TOKEN"},
		{"", "https://example.org/secret", "PRODUCT_TOKEN"},
		{"*", "https://example.org/secret", "PRODUCT_TOKEN"},
		{"ExampleBot/1.0 (+https://example.org/bot)", "https://example.org/secret", "PRODUCT_TOKEN"},
	}
	for _, tc := range cases {
		for _, compare := range []bool{false, true} {
			args := []string{"robots", file, tc.token, tc.url}
			if compare {
				args = append([]string{"robots", "--compare-colly"}, args[1:]...)
			}
			code, out, errOut := runCLI(t, nil, args...)
			if code != exitUsage || out != "" || !strings.Contains(errOut, tc.says) {
				t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 naming %s", args, code, out, errOut, tc.says)
			}
		}
	}
	for _, token := range []string{"ExampleBot", "ExampleBot-User", "FAU-RRZE-Legalcheck", "FAU-INF12-Linkcheck"} {
		if code, out, errOut := runCLI(t, nil, "robots", file, token, "https://example.org/secret"); code != exitNo || !strings.HasPrefix(out, "disallowed\n") {
			t.Errorf("token %q: exit %d, stdout %q, stderr %q; want disallowed", token, code, out, errOut)
		}
	}
}

// TestEmptyUserAgentIsInvalid: ua check "" is a negative answer (exit 1) with the problem, like
// any other invalid User-Agent.
func TestEmptyUserAgentIsInvalid(t *testing.T) {
	for _, ua := range []string{"", "   "} {
		code, out, _ := runCLI(t, nil, "ua", "check", ua)
		if code != exitNo || !strings.Contains(out, "User-Agent:") || !strings.Contains(out, "empty") {
			t.Errorf("ua check %q: exit %d, stdout %q; want exit 1 and the problem", ua, code, out)
		}
	}
}

// TestOversizedUserAgent: a 100 KB --ua is never sent; every command refuses it up front.
func TestOversizedUserAgent(t *testing.T) {
	sent := make(chan string, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent <- r.UserAgent()
		http.NotFound(w, r)
	}))
	defer srv.Close()
	huge := "ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org; " + strings.Repeat("x", 100<<10) + ")"
	for _, args := range [][]string{
		{"ua", "build", "--ua", huge},
		{"fetch", "--ua", huge, srv.URL + "/"},
		{"crawl", "--no-cache", "--ua", huge, srv.URL + "/"},
	} {
		code, _, errOut := runCLI(t, nil, args...)
		if code != exitUsage || !strings.Contains(errOut, "512") || len(errOut) > 2000 {
			t.Errorf("%s with a 100 KB --ua: exit %d, stderr %.300q; want exit 2 naming the 512-byte limit, briefly", args[0], code, errOut)
		}
	}
	if code, out, _ := runCLI(t, map[string]string{"ETIQUETTE_UA": huge}, "ua", "build"); code != exitUsage || out != "" {
		t.Errorf("ETIQUETTE_UA of 100 KB: exit %d, stdout %.100q", code, out)
	}
	if code, _, _ := runCLI(t, nil, "ua", "check", huge); code != exitNo {
		t.Errorf("ua check of 100 KB: exit %d, want 1", code)
	}
	select {
	case ua := <-sent:
		t.Errorf("a request was sent with a %d-byte User-Agent", len(ua))
	default:
	}
}

// TestIdentityProblemsNameFlags: the identity package speaks of Identity fields; the command
// line tells every problem in its flags, keeping the advice.
func TestIdentityProblemsNameFlags(t *testing.T) {
	cases := []struct {
		args  []string
		flags []string // each must be named
	}{
		{[]string{"ua", "build", "--token", "curl", "--bot-version", "1", "--info-url", "ftp://x"}, []string{"--token", "--info-url"}},
		{[]string{"ua", "build", "--profile", "fau", "--token", "Legalcheck"}, []string{"--token", "--org", "--bot", "--bot-version", "--info-url", "--contact"}},
		{[]string{"ua", "build", "--org", "RRZE", "--bot", "X", "--bot-version", "1", "--info-url", "https://example.org"}, []string{"--profile"}},
		{append([]string{"ua", "build", "--user-token", "examplebot"}, identityArgs...), []string{"--user-token"}},
		{[]string{"ua", "build", "--ua", "ExampleBot/1.0"}, []string{"--ua (info URL)"}},
		{[]string{"ua", "build"}, []string{"--ua", "ETIQUETTE_UA", "--token", "--profile fau"}},
	}
	for _, tc := range cases {
		code, _, errOut := runCLI(t, nil, tc.args...)
		if code != exitUsage {
			t.Errorf("%q: exit %d, want 2", tc.args, code)
		}
		for _, f := range tc.flags {
			if !strings.Contains(errOut, f) {
				t.Errorf("%q: %q does not name %s", tc.args, errOut, f)
			}
		}
		if strings.Contains(errOut, "Identity.") || strings.Contains(errOut, "identity.") {
			t.Errorf("%q: the message speaks Go: %q", tc.args, errOut)
		}
		if strings.Count(errOut, "(fix: ") < strings.Count(errOut, "\n  ") {
			t.Errorf("%q: a problem lost its fix: %q", tc.args, errOut)
		}
	}
}

// TestAuthorizedRateIsAHost: --authorized-rate names a host (hostclock's rule), not a URL.
func TestAuthorizedRateIsAHost(t *testing.T) {
	for _, v := range []string{"example.org/x=5", "user@example.org=5", "example.org=0", "example.org"} {
		args := append(append([]string{"crawl", "--no-cache", "--authorized-rate", v}, identityArgs...), "http://127.0.0.1:1/")
		if code, _, errOut := runCLI(t, nil, args...); code != exitUsage || !strings.Contains(errOut, "--authorized-rate") {
			t.Errorf("--authorized-rate %q: exit %d, stderr %q; want exit 2 naming the flag", v, code, errOut)
		}
	}
}

// TestUnreadableRobotsTxt: when robots.txt cannot be read, fetch and crawl say so in the
// library's words — not as a disallowing rule, and without net/http's 'Get "URL":' prefix.
func TestUnreadableRobotsTxt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		w.Write([]byte("a page"))
	}))
	defer srv.Close()

	code, out, errOut := runCLI(t, nil, append(append([]string{"fetch"}, identityArgs...), srv.URL+"/page")...)
	if code != exitNo || out != "" {
		t.Errorf("fetch: exit %d, stdout %q; want exit 1 and no body", code, out)
	}
	if !strings.HasPrefix(errOut, "etiquette fetch: robots.txt") || strings.Contains(errOut, `Get "`) || !strings.Contains(errOut, "500") {
		t.Errorf("fetch: stderr %q; want the library's robots.txt error, naming the 500", errOut)
	}

	code, out, _ = runCLI(t, nil, append(append([]string{"crawl", "--no-cache"}, identityArgs...), srv.URL+"/page")...)
	if code != exitNo {
		t.Errorf("crawl: exit %d, want 1 (no page fetched)", code)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	found := false
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if l.URL != srv.URL+"/page" {
			continue
		}
		found = true
		if l.Refused != "robots" || !strings.HasPrefix(l.Reason, "robots.txt") || strings.Contains(l.Reason, `Get "`) || !strings.Contains(l.Reason, "500") {
			t.Errorf("crawl: the page's line is %+v; want refused robots with the library's robots.txt reason", l)
		}
	}
	if !found {
		t.Errorf("crawl: no line for the page:\n%s", out)
	}
}
