package main

// This file decides the fetch command: one page for a person, with the user-triggered token,
// and what its outcome means as an exit code.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/politecrawl/etiquette/politeness"
)

var fetchDoc = commandDoc{
	name:  "fetch",
	usage: "IDENTITY-FLAGS [flags] URL",
	about: `Fetches one page for a person, with the user-triggered token (<token>-User, or --user-token):
robots.txt is decided for that token, no link is followed, and nothing is kept past the run (an
in-memory cache, no cookies). The body goes to stdout; the status line, or why nothing was
fetched, to stderr.`,
	args: `  URL  an absolute http(s) URL`,
	exits: `  0    a 2xx answer
  1    not a 2xx, or nothing could be fetched (robots.txt unreachable, a network error)
  2    unusable input: usage, an invalid identity or URL, an unsupported flag
  3    robots.txt blocks the user-triggered token
  130  interrupted (SIGINT)`,
	identity: true,
}

// runFetch: "fetch IDENTITY-FLAGS URL" — one page for a person, with the user-triggered token,
// no links followed, nothing kept past the run (an in-memory cache, no cookies).
func runFetch(ctx context.Context, args []string, e env) (int, error) {
	fs := newFlagSet(fetchDoc)
	var idf identityFlags
	idf.register(fs)
	strict := fs.Bool("strict-robots", false, notYet+"also obey the robots.txt rules for * and for the crawl token")
	maxWait := fs.Duration("max-wait", 0, "`DURATION`: "+notYet+"give up when the origin asks to wait longer than this")
	pos, err := parseFlags(fs, fetchDoc, args, e)
	if err != nil {
		return exitUsage, err
	}
	if *strict {
		return exitUsage, errNotYet("--strict-robots")
	}
	if *maxWait != 0 {
		return exitUsage, errNotYet("--max-wait")
	}
	if len(pos) != 1 {
		return exitUsage, fetchDoc.argErrorf("want one URL, got %d arguments", len(pos))
	}
	u, err := httpURL("URL", pos[0])
	if err != nil {
		return exitUsage, err
	}
	id, err := idf.identity(e.getenv, e.warn)
	if err != nil {
		return exitUsage, err
	}
	// A person's fetch keeps nothing past the run: an in-memory cache (the default for this mode).
	door, err := politeness.NewDoor(politeness.Policy{Identity: id, Mode: politeness.UserTriggered})
	if err != nil {
		return exitUsage, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return exitUsage, usagef("URL %q: %v", pos[0], err)
	}
	start := time.Now()
	resp, err := door.Client().Do(req)
	if err != nil {
		if dis, ok := blockedByRule(err); ok {
			fmt.Fprintf(e.stderr, "etiquette fetch: robots.txt blocks %s for %s (line %d: %s)\n", dis.Token, u, dis.Decision.Line, dis.Decision.Rule)
			return exitRobots, nil
		}
		// Anything else — robots.txt unreachable among them — is a failure to fetch (exit 1),
		// told in the library's words.
		return exitNo, withoutRequest(err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(e.stdout, resp.Body)
	fmt.Fprintf(e.stderr, "%s %s (%d bytes, %s)\n", resp.Proto, resp.Status, n, time.Since(start).Round(time.Millisecond))
	if err != nil {
		return exitNo, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return exitNo, nil
	}
	return exitOK, nil
}
