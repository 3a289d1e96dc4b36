package main

// This file decides the fetch command: one page for a person, with the user-triggered token,
// and what its outcome means as an exit code.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/hostclock"
)

var fetchDoc = commandDoc{
	name:  "fetch",
	usage: "IDENTITY-FLAGS [flags] URL",
	about: `Fetches one page for a person, with the user-triggered token (<token>-User, or --user-token).
No link is followed, and nothing is kept past the run (an in-memory cache, no cookies, no file).
The body goes to stdout; the status line, or why nothing was fetched, to stderr.

robots.txt: only a group that names the user-triggered token decides; its Disallow blocks the
fetch (exit 3, with the rule). When no group names it, the fetch is allowed: the crawl token's
group and the * group are about crawling, not about one page a person asked for. With
--strict-robots the fetch is also blocked when RFC 9309's group selection for the user-triggered
token (its own group, else *) disallows it, or when the crawl token's group (its own, else *) does.
A robots.txt that cannot be read (5xx, 429, unreachable) blocks the fetch in both readings.

Waiting: a person waits for the origin's turn (the 3-per-second budget, a Crawl-delay, a
Retry-After) up to --max-wait; when the site already asked for a longer wait, the fetch fails at
once (exit 1) and no request is sent early.`,
	args: `  URL  an absolute http(s) URL`,
	exits: `  0    a 2xx answer
  1    not a 2xx, or nothing could be fetched (robots.txt unreachable, a network error, a wait
       longer than --max-wait)
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
	strict := fs.Bool("strict-robots", false, "also obey RFC 9309's group for the user-triggered token (else *) and the crawl token's group (else *)")
	maxWait := fs.Duration("max-wait", politeness.DefaultMaxWait, "`DURATION`: wait for the origin's turn at most this long, else fail at once (0: the default)")
	pos, err := parseFlags(fs, fetchDoc, args, e)
	if err != nil {
		return exitUsage, err
	}
	switch {
	case *maxWait < 0:
		return exitUsage, usagef("--max-wait %s: want a positive duration, such as 10s", *maxWait)
	case *maxWait == 0:
		*maxWait = politeness.DefaultMaxWait
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
	door, err := politeness.NewDoor(politeness.Policy{Identity: id, Mode: politeness.UserTriggered,
		StrictRobots: *strict, MaxWait: *maxWait})
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
			group := ""
			if g := dis.Decision.Group; g != "" && !strings.EqualFold(g, dis.Token) {
				group = "the " + g + " group, "
			}
			fmt.Fprintf(e.stderr, "etiquette fetch: robots.txt blocks %s for %s (%sline %d: %s)\n", dis.Token, u, group, dis.Decision.Line, dis.Decision.Rule)
			return exitRobots, nil
		}
		var tl *hostclock.WaitTooLongError
		if errors.As(err, &tl) {
			enough := tl.Wait.Truncate(time.Second) + time.Second
			return exitNo, fmt.Errorf("%s; not waiting longer than %s (try again after %s, or pass --max-wait %s)",
				askedToWait(tl), roughly(*maxWait), time.Now().Add(tl.Wait).Format(time.TimeOnly), enough)
		}
		if errors.Is(err, hostclock.ErrStartByPassed) {
			return exitNo, fmt.Errorf("waited %s (--max-wait) for the site's turn: %w", roughly(*maxWait), withoutRequest(err))
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

// askedToWait says, for a person, why the origin could not start in time: "the site asked us to
// wait 60s (Retry-After)", "robots.txt asks for 30s between requests (Crawl-delay)", ….
func askedToWait(tl *hostclock.WaitTooLongError) string {
	wait := roughly(tl.Wait)
	switch tl.Reason {
	case hostclock.ReasonRetryAfter:
		return "the site asked us to wait " + wait + " (Retry-After)"
	case hostclock.ReasonBackoff:
		return "the site answered with errors, so it gets a pause of " + wait + " (backoff)"
	case hostclock.ReasonCrawlDelay:
		return "robots.txt asks for a gap between requests: the next may start in " + wait + " (Crawl-delay)"
	case hostclock.ReasonLatency:
		return "the site answers slowly, so requests to it are spaced: the next may start in " + wait
	case hostclock.ReasonRate:
		return "the site's budget of requests per second is spent: the next may start in " + wait
	}
	return "the site is paused for " + wait + " (" + tl.Reason + ")"
}

// roughly formats d for a person: "60 s" from 10 s on, "2.5 s" from 1 s, "300 ms" below.
func roughly(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return fmt.Sprintf("%d s", d.Round(time.Second)/time.Second)
	case d >= time.Second:
		return strconv.FormatFloat(d.Round(100*time.Millisecond).Seconds(), 'f', -1, 64) + " s"
	}
	return fmt.Sprintf("%d ms", d.Round(time.Millisecond)/time.Millisecond)
}
