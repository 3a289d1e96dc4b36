package main

import (
	"strings"
	"testing"
)

// TestHelp: every way of asking for help exits 0 and prints, on stdout, a complete help: the usage
// line with the positional arguments, every flag, and the exit codes.
func TestHelp(t *testing.T) {
	identity := []string{"--ua", "--profile", "--token", "--org", "--bot", "--bot-version", "--info-url", "--contact", "--user-token"}
	cases := []struct {
		args  []string
		usage string   // the usage line starts so
		flags []string // every flag the command has
	}{
		{[]string{"-h"}, "usage: etiquette COMMAND [flags] [arguments]", nil},
		{[]string{"--help"}, "usage: etiquette COMMAND [flags] [arguments]", nil},
		{[]string{"help"}, "usage: etiquette COMMAND [flags] [arguments]", nil},
		{[]string{"ua", "-h"}, "usage: etiquette ua check [--profile generic|fau] UA | etiquette ua build IDENTITY-FLAGS", nil},
		{[]string{"ua", "check", "-h"}, "usage: etiquette ua check [--profile generic|fau] UA", []string{"--profile"}},
		{[]string{"ua", "build", "--help"}, "usage: etiquette ua build IDENTITY-FLAGS", identity},
		{[]string{"robots", "-h"}, "usage: etiquette robots [--user-triggered [--strict-robots --crawl-token T] | --compare-colly [--colly-ua UA]] ROBOTS_FILE PRODUCT_TOKEN URL", []string{"--compare-colly", "--colly-ua", "--user-triggered", "--strict-robots", "--crawl-token"}},
		{[]string{"help", "robots"}, "usage: etiquette robots [--user-triggered [--strict-robots --crawl-token T] | --compare-colly [--colly-ua UA]] ROBOTS_FILE PRODUCT_TOKEN URL", []string{"--compare-colly", "--colly-ua", "--user-triggered", "--strict-robots", "--crawl-token"}},
		{[]string{"crawl", "-h"}, "usage: etiquette crawl IDENTITY-FLAGS [flags] URL...", append([]string{"--rate", "--authorized-rate", "--concurrency",
			"--max-pages", "--max-depth", "--cache-dir", "--no-cache", "--redis", "--redis-prefix", "--redis-wait", "--redis-lease", "--cookies-for", "--allow-cookie", "--proxy",
			"--sign-key", "--signature-agent"}, identity...)},
		{[]string{"crawl", "https://example.org/", "-h"}, "usage: etiquette crawl IDENTITY-FLAGS [flags] URL...", []string{"--rate"}},
		{[]string{"fetch", "-h"}, "usage: etiquette fetch IDENTITY-FLAGS [flags] URL", append([]string{"--strict-robots", "--max-wait"}, identity...)},
		{[]string{"keys", "-h"}, "usage: etiquette keys generate FILE | jwks FILE... | directory --directory-authority HOST FILE...", nil},
		{[]string{"keys", "generate", "-h"}, "usage: etiquette keys generate FILE", nil},
		{[]string{"help", "keys", "jwks"}, "usage: etiquette keys jwks FILE...", nil},
		{[]string{"keys", "directory", "--help"}, "usage: etiquette keys directory --directory-authority HOST [--validity D] [--max-age D] FILE...",
			[]string{"--directory-authority", "--validity", "--max-age"}},
		{[]string{"info-page", "-h"}, "usage: etiquette info-page IDENTITY-FLAGS [flags] --out DIR", append([]string{"--out", "--purpose", "--unit", "--networks",
			"--rate", "--authorized-rate", "--concurrency", "--no-cache", "--cookies-for", "--allow-cookie", "--sign-key", "--signature-agent"}, identity...)},
		{[]string{"demo", "-h"}, "usage: etiquette demo [--twice] [--report DIR] [-v]", []string{"--twice", "--report", "-v"}},
	}
	for _, tc := range cases {
		code, out, errOut := runCLI(t, nil, tc.args...)
		if code != exitOK || errOut != "" {
			t.Errorf("%q: exit %d, stderr %q; want exit 0 and nothing on stderr", tc.args, code, errOut)
		}
		if !strings.HasPrefix(out, tc.usage+"\n") {
			t.Errorf("%q: help does not start with the usage line %q:\n%s", tc.args, tc.usage, out)
		}
		if !strings.Contains(out, "exit codes:") {
			t.Errorf("%q: help lists no exit codes:\n%s", tc.args, out)
		}
		for _, f := range tc.flags {
			if !strings.Contains(out, "\n  "+f+" ") && !strings.Contains(out, "\n  "+f+"\n") {
				t.Errorf("%q: help does not list %s:\n%s", tc.args, f, out)
			}
		}
	}
}

// TestTopLevelHelpListsEveryCommandForm: the top-level help names each command's flags that
// change what it answers (robots --user-triggered reads robots.txt as a fetch for a person does).
func TestTopLevelHelpListsEveryCommandForm(t *testing.T) {
	_, out, _ := runCLI(t, nil, "help")
	for _, form := range []string{"robots [--user-triggered", "--compare-colly", "fetch IDENTITY-FLAGS", "demo [--twice] [--report DIR]"} {
		if !strings.Contains(out, form) {
			t.Errorf("the top-level help does not list %q:\n%s", form, out)
		}
	}
}

// TestDemoRefusesAnUnusableReportDirBeforeStarting: --report naming a directory that cannot be
// created exits 2 before the demo site starts or anything is crawled.
func TestDemoRefusesAnUnusableReportDirBeforeStarting(t *testing.T) {
	code, out, errOut := runCLI(t, nil, "demo", "--report", "/proc/nope")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "/proc/nope") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 naming the directory and nothing on stdout", code, out, errOut)
	}
	if strings.Contains(errOut, "the demo site:") {
		t.Errorf("the demo site started before the report directory was checked:\n%s", errOut)
	}
}

// TestUsageErrorsOnStderr: a wrong command line exits 2 with one message prefixed once, and no
// help on stdout.
func TestUsageErrorsOnStderr(t *testing.T) {
	for _, args := range [][]string{{"fetch", "--max-wait", "-1s", "http://127.0.0.1:1/"}, {"demo", "extra"}, {"demo", "--nosuch"}, {"nosuch"}, {"ua"}, {"ua", "nosuch"}, {"keys"}, {"keys", "nosuch"}, {"keys", "generate"}, {"info-page"}, {"robots", "--nosuch"}, {"robots", "x"}, {"help", "nosuch"}, {}} {
		code, out, errOut := runCLI(t, nil, args...)
		if code != exitUsage || out != "" || errOut == "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and a message on stderr only", args, code, out, errOut)
		}
		if strings.Contains(errOut, "etiquette: etiquette") || strings.Contains(errOut, "demo: demo") {
			t.Errorf("%q: doubled prefix in %q", args, errOut)
		}
	}
}
